# Creates sys.argv[1] with the octal mode sys.argv[2] through io_uring's
# IORING_OP_OPENAT, which no system call filter sees: one submission on a
# ring of its own, set up and entered with raw system calls.
import ctypes, mmap, os, struct, sys

SYS_io_uring_setup, SYS_io_uring_enter = 425, 426
IORING_OP_OPENAT, IORING_FEAT_SINGLE_MMAP, IORING_ENTER_GETEVENTS = 18, 1, 1
IORING_OFF_CQ_RING, IORING_OFF_SQES = 0x8000000, 0x10000000
AT_FDCWD = -100

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
path, mode = sys.argv[1].encode(), int(sys.argv[2], 8)

params = ctypes.create_string_buffer(120)  # struct io_uring_params
ring_fd = libc.syscall(SYS_io_uring_setup, 4, params)
if ring_fd < 0:
    print("io_uring_setup failed:", os.strerror(ctypes.get_errno()))
    sys.exit(3)
sq_entries, cq_entries, _, _, _, features = struct.unpack_from("6I", params, 0)
sq_head, sq_tail, sq_mask, _, _, _, sq_array = struct.unpack_from("7I", params, 40)
cq_head, _, cq_mask, _, _, cqes = struct.unpack_from("6I", params, 80)
rw = mmap.PROT_READ | mmap.PROT_WRITE
sq = mmap.mmap(ring_fd, max(sq_array + sq_entries * 4, cqes + cq_entries * 16), mmap.MAP_SHARED, rw, offset=0)
cq = sq if features & IORING_FEAT_SINGLE_MMAP else mmap.mmap(ring_fd, cqes + cq_entries * 16, mmap.MAP_SHARED, rw, offset=IORING_OFF_CQ_RING)
sqes = mmap.mmap(ring_fd, sq_entries * 64, mmap.MAP_SHARED, rw, offset=IORING_OFF_SQES)

name = ctypes.create_string_buffer(path)
# opcode, flags, ioprio, fd, off, addr (the name), len (the mode), open_flags, user_data
sqe = struct.pack("<BBHiQQIIQ", IORING_OP_OPENAT, 0, 0, AT_FDCWD, 0, ctypes.addressof(name), mode,
                  os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 1)
sqes[0:len(sqe)] = sqe
tail = struct.unpack_from("I", sq, sq_tail)[0]
struct.pack_into("I", sq, sq_array + (tail & sq_mask) * 4, 0)
struct.pack_into("I", sq, sq_tail, tail + 1)
if libc.syscall(SYS_io_uring_enter, ring_fd, 1, 1, IORING_ENTER_GETEVENTS, None, 0) < 0:
    print("io_uring_enter failed:", os.strerror(ctypes.get_errno()))
    sys.exit(3)
head = struct.unpack_from("I", cq, cq_head)[0]
_, res, _ = struct.unpack_from("<QiI", cq, cqes + (head & cq_mask) * 16)
if res < 0:
    print("IORING_OP_OPENAT failed:", os.strerror(-res))
    sys.exit(1)
print("IORING_OP_OPENAT made", sys.argv[1])
