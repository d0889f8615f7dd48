"""Reports."""
from .core import total_area


def report(shapes):
    # total_area is mentioned in this comment.
    return "%.2f" % total_area(shapes)
