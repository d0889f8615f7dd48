package guard

import (
	"slices"
	"strings"
)

// optionTables are the long options of the programs whose option parsing
// the exec rules follow, as the programs themselves list them: GNU
// coreutils 9.1 and GNU sed 4.9 (--help), curl 7.88.1 (--help all), and
// git 2.39's subcommands (git CMD --git-completion-helper-all, with the
// short forms git CMD -h shows). Each is "name", "name=" for an option
// whose value is the next word when it is not given after "=", "/x" for
// its short form -x. A git option is negatable (--no-name) unless it ends
// in "!". The long options of these programs may be abbreviated to any
// unambiguous prefix (getopt_long, git's parse-options and curl all take
// one); a word the table does not know, or knows as the prefix of several
// options, is read as possibly any of them under an ask or deny rule.
// Other programs' long options are matched by prefix alone (see argv.maybe).
var optionTables = map[string]string{
	"rm":    `dir/d force/f help interactive/i no-preserve-root one-file-system preserve-root recursive/r verbose/v version`,
	"cp":    `archive/a attributes-only backup/b context/Z copy-contents dereference/L force/f help interactive/i link/l no-clobber/n no-dereference/P no-preserve= no-target-directory/T one-file-system/x parents preserve recursive/R reflink remove-destination sparse= strip-trailing-slashes suffix=/S symbolic-link/s target-directory=/t update/u verbose/v version`,
	"mv":    `backup/b context/Z force/f help interactive/i no-clobber/n no-target-directory/T strip-trailing-slashes suffix=/S target-directory=/t update/u verbose/v version`,
	"ln":    `backup/b directory/d force/f help interactive/i logical/L no-dereference/n no-target-directory/T physical/P relative/r suffix=/S symbolic/s target-directory=/t verbose/v version`,
	"chmod": `changes/c help no-preserve-root preserve-root quiet/f recursive/R reference= silent/f verbose/v version`,
	"chown": `changes/c dereference from= help no-dereference/h no-preserve-root preserve-root quiet/f recursive/R reference= silent/f verbose/v version`,
	"chgrp": `changes/c dereference help no-dereference/h no-preserve-root preserve-root quiet/f recursive/R reference= silent/f verbose/v version`,
	"shred": `exact/x force/f help iterations=/n random-source= remove/u size=/s verbose/v version zero/z`,
	"dd":    `help version`,
	"sed":   `debug expression=/e file=/f follow-symlinks help in-place/i line-length=/l null-data/z posix quiet/n regexp-extended/E sandbox separate/s silent/n unbuffered/u version`,
	"curl": `abstract-unix-socket= alt-svc= anyauth append/a aws-sigv4= basic cacert= capath= cert=/E cert-status
		cert-type= ciphers= compressed compressed-ssh config=/K connect-timeout= connect-to= continue-at=/C
		cookie=/b cookie-jar=/c create-dirs create-file-mode= crlf crlfile= curves= data=/d data-ascii=
		data-binary= data-raw= data-urlencode= delegation= digest disable/q disable-eprt disable-epsv
		disallow-username-in-url dns-interface= dns-ipv4-addr= dns-ipv6-addr= dns-servers= doh-cert-status
		doh-insecure doh-url= dump-header=/D egd-file= engine= etag-compare= etag-save= expect100-timeout=
		fail/f fail-early fail-with-body false-start form=/F form-escape form-string= ftp-account=
		ftp-alternative-to-user= ftp-create-dirs ftp-method= ftp-pasv ftp-port=/P ftp-pret ftp-skip-pasv-ip
		ftp-ssl-ccc ftp-ssl-ccc-mode= ftp-ssl-control get/G globoff/g happy-eyeballs-timeout-ms=
		haproxy-protocol head/I header=/H help/h hostpubmd5= hostpubsha256= hsts= http0.9 http1.0/0 http1.1
		http2 http2-prior-knowledge http3 http3-only ignore-content-length include/i insecure/k interface=
		ipv4/4 ipv6/6 json= junk-session-cookies/j keepalive-time= key= key-type= krb= libcurl= limit-rate=
		list-only/l local-port= location/L location-trusted login-options= mail-auth= mail-from= mail-rcpt=
		mail-rcpt-allowfails manual/M max-filesize= max-redirs= max-time=/m metalink negotiate netrc/n
		netrc-file= netrc-optional next/: no-alpn no-buffer/N no-clobber no-keepalive no-npn
		no-progress-meter no-sessionid noproxy= ntlm ntlm-wb oauth2-bearer= output=/o output-dir= parallel/Z
		parallel-immediate parallel-max= pass= path-as-is pinnedpubkey= post301 post302 post303 preproxy
		progress-bar/# proto= proto-default= proto-redir= proxy/x proxy-anyauth proxy-basic proxy-cacert=
		proxy-capath= proxy-cert= proxy-cert-type= proxy-ciphers= proxy-crlfile= proxy-digest proxy-header=
		proxy-insecure proxy-key= proxy-key-type= proxy-negotiate proxy-ntlm proxy-pass= proxy-pinnedpubkey=
		proxy-service-name= proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tls13-ciphers=
		proxy-tlsauthtype= proxy-tlspassword= proxy-tlsuser= proxy-tlsv1 proxy-user=/U proxy1.0=
		proxytunnel/p pubkey= quote=/Q random-file= range=/r rate= raw referer=/e remote-header-name/J
		remote-name/O remote-name-all remote-time/R remove-on-error request=/X request-target= resolve=
		retry= retry-all-errors retry-connrefused retry-delay= retry-max-time= sasl-authzid= sasl-ir
		service-name= show-error/S silent/s socks4= socks4a= socks5= socks5-basic socks5-gssapi
		socks5-gssapi-nec socks5-gssapi-service= socks5-hostname= speed-limit=/Y speed-time=/y ssl
		ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2/2 sslv3/3
		stderr= styled-output suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option=/t
		tftp-blksize= tftp-no-options time-cond=/z tls-max= tls13-ciphers= tlsauthtype= tlspassword=
		tlsuser= tlsv1/1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace= trace-ascii= trace-time
		unix-socket= upload-file=/T url= url-query= use-ascii/B user=/u user-agent=/A verbose/v version/V
		write-out=/w xattr`,
}

// gitTables are optionTables for git's subcommands, by subcommand.
var gitTables = map[string]string{
	"branch":   `verbose/v quiet/q track/t set-upstream set-upstream-to=/u unset-upstream color remotes/r contains with! without! abbrev all/a delete/d move/m copy/c list/l show-current create-reflog edit-description force/f merged column sort= points-at= ignore-case/i recurse-submodules format=`,
	"checkout": `guess overlay quiet/q recurse-submodules progress merge/m conflict= detach/d track/t force/f orphan= overwrite-ignore ignore-other-worktrees ours/2! theirs/3! patch/p ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul`,
	"clean":    `quiet/q dry-run/n force/f interactive/i exclude=/e!`,
	"commit":   `quiet/q verbose/v file=/F author= date= message=/m reedit-message=/c reuse-message=/C fixup= squash= reset-author trailer=! signoff/s template=/t edit/e cleanup= status gpg-sign/S all/a include/i interactive patch/p only/o no-verify/n dry-run short branch ahead-behind porcelain long null/z amend untracked-files/u pathspec-from-file= pathspec-file-nul allow-empty allow-empty-message verify post-rewrite`,
	"fetch":    `verbose/v quiet/q all set-upstream append/a atomic upload-pack= force/f multiple/m tags/t jobs=/j prefetch prune/p prune-tags/P recurse-submodules dry-run write-fetch-head keep/k update-head-ok/u progress depth= shallow-since= shallow-exclude= deepen= unshallow! refetch! submodule-prefix= recurse-submodules-default= update-shallow refmap=! server-option=/o ipv4/4 ipv6/6 negotiation-tip= negotiate-only filter= auto-maintenance auto-gc show-forced-updates write-commit-graph stdin`,
	"merge":    `stat summary log squash commit edit/e cleanup= ff ff-only! rerere-autoupdate verify-signatures strategy=/s strategy-option=/X message=/m file/F! into-name= verbose/v quiet/q abort quit continue allow-unrelated-histories progress gpg-sign/S autostash overwrite-ignore signoff verify`,
	"pull":     `verbose/v quiet/q progress recurse-submodules rebase/r stat summary log signoff squash commit edit cleanup= ff ff-only! verify verify-signatures autostash strategy=/s strategy-option=/X gpg-sign/S allow-unrelated-histories all append/a upload-pack= force/f tags/t prune/p jobs/j dry-run keep/k depth= shallow-since= shallow-exclude= deepen= unshallow! update-shallow refmap=! server-option=/o ipv4/4 ipv6/6 negotiation-tip= show-forced-updates set-upstream`,
	"push":     `verbose/v quiet/q repo= all mirror delete/d tags dry-run/n porcelain force/f force-with-lease force-if-includes recurse-submodules= thin receive-pack= exec= set-upstream/u progress prune follow-tags signed atomic push-option=/o ipv4/4 ipv6/6 verify`,
	"rebase":   `onto= keep-base quiet/q verbose/v no-stat/n signoff committer-date-is-author-date reset-author-date ignore-date ignore-whitespace whitespace= force-rebase/f continue! skip! abort! quit! edit-todo! show-current-patch! apply! merge/m! interactive/i! preserve-merges rerere-autoupdate empty=! keep-empty autosquash update-refs gpg-sign/S autostash exec=/x allow-empty-message rebase-merges/r fork-point strategy=/s strategy-option=/X root reschedule-failed-exec reapply-cherry-picks verify stat ff`,
	"reset":    `quiet/q mixed soft hard merge keep recurse-submodules patch/p intent-to-add/N pathspec-from-file= pathspec-file-nul refresh`,
	"restore":  `source=/s staged/S worktree/W ignore-unmerged overlay quiet/q recurse-submodules progress merge/m conflict= ours/2! theirs/3! patch/p ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul`,
	"rm":       `dry-run/n quiet/q cached force/f ignore-unmatch sparse pathspec-from-file= pathspec-file-nul`,
	"switch":   `create=/c force-create=/C guess discard-changes quiet/q recurse-submodules progress merge/m conflict= detach/d track/t force/f orphan= overwrite-ignore ignore-other-worktrees`,
	"tag":      `list/l! delete/d! verify/v! annotate/a message=/m! file=/F edit/e sign/s cleanup= local-user=/u force/f create-reflog column contains with! without! merged sort= points-at format= color ignore-case/i`,
}

// gitValueOpts are git's own long options (before its subcommand) whose
// value may be the next word; git takes them spelled in full only.
var gitValueOpts = []string{"git-dir", "work-tree", "namespace", "super-prefix", "config-env", "shallow-file"}

// longOpt is one long option of a program.
type longOpt struct {
	name  string
	short rune // 0: none
	value bool // takes the next word as its value when not given with "="
}

// optTable is a program's long options, by name.
type optTable map[string]longOpt

// parseTable reads a table of optionTables; negatable adds --no-name for
// each option not marked "!" (git's parse-options).
func parseTable(spec string, negatable bool) optTable {
	t := optTable{}
	for _, tok := range strings.Fields(spec) {
		neg := negatable && !strings.HasSuffix(tok, "!")
		tok = strings.TrimSuffix(tok, "!")
		var o longOpt
		if i := strings.IndexByte(tok, '/'); i >= 0 {
			o.short = []rune(tok[i+1:])[0]
			tok = tok[:i]
		}
		o.name, o.value = strings.TrimSuffix(tok, "="), strings.HasSuffix(tok, "=")
		t[o.name] = o
		if neg && !strings.HasPrefix(o.name, "no-") {
			if _, ok := t["no-"+o.name]; !ok {
				t["no-"+o.name] = longOpt{name: "no-" + o.name}
			}
		}
	}
	return t
}

var (
	programTables = func() map[string]optTable {
		m := map[string]optTable{}
		for p, spec := range optionTables {
			m[p] = parseTable(spec, false)
		}
		return m
	}()
	gitSubTables = func() map[string]optTable {
		m := map[string]optTable{}
		for sub, spec := range gitTables {
			m[sub] = parseTable(spec, true)
		}
		return m
	}()
)

// resolve reads the long option name (without "--" and "=value") as the
// program does: the option of that name, else the one option it is a
// prefix of. Options of one short form count as one (chmod's --quiet and
// --silent). ok is false for a name the table does not know or knows as
// the prefix of several options; cands are then the options it may be.
func (t optTable) resolve(name string) (o longOpt, ok bool, cands []longOpt) {
	if o, ok := t[name]; ok {
		return o, true, nil
	}
	for n, c := range t {
		if strings.HasPrefix(n, name) {
			cands = append(cands, c)
		}
	}
	slices.SortFunc(cands, func(a, b longOpt) int { return strings.Compare(a.name, b.name) })
	if len(cands) == 1 || len(cands) > 1 && cands[0].short != 0 && !slices.ContainsFunc(cands, func(c longOpt) bool { return c.short != cands[0].short }) {
		return cands[0], true, nil
	}
	return longOpt{}, false, cands
}
