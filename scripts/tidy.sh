#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs clang-tidy (.clang-tidy's checks) over every translation unit of the project and fails on
# any finding. scripts/test.sh calls it after the clang preset's build, whose compile_commands.json
# it reads (clang-tidy parses with Clang, so a Clang build's flags suit it best).
#
#   scripts/tidy.sh [BUILD_DIR]       default build-clang; configure it first (cmake --preset clang)
#
# Checked: the .cpp files under common/, variants/, server/, bench/ and course/, and through them
# the project's headers (HeaderFilterRegex). Left out: generated files in the build folder (CMake's
# unity sources repeat files that are checked anyway) and the Relacy models in common/model/, which
# compile against Relacy's replacement of the standard library that clang-tidy cannot parse, and
# the compile-fail tests (*/tests/compile_fail/), whose point is a static_assert that fires.
# Tests and course checks run with two performance checks off (.clang-tidy says why).
#
# Result cache. clang-tidy costs minutes for the whole tree while a typical change touches a few
# translation units, so a translation unit (TU) that clang-tidy found clean is remembered under a
# key of everything its result depends on, and a later run with the same key skips it. Only clean
# TUs are stored: a TU with a finding, or one clang-tidy fails on, is checked and reported on every
# run. The key (sha256) holds:
#   - clang-tidy itself: its --version, a hash of its binary, the path, size and time of the
#     LLVM/Clang libraries it loads;
#   - its options for the TU: the command line this script runs (with the extra -checks= of tests),
#     the configuration clang-tidy --dump-config derives for the TU from every .clang-tidy that
#     applies, and the content of each .clang-tidy in the folders above every file the TU reads;
#   - every compile command compile_commands.json holds for the TU (a file built by several targets
#     is checked once per command), less its output and dependency-file arguments;
#   - the TU preprocessed by that command (-E): every header it includes, in the order and at the
#     path the compiler found it, the macros set on the command line, the branches taken;
#   - the raw content of every file named in the preprocessed text (comments and NOLINT markers,
#     macro definitions, layout: what -E drops), and whether HeaderFilterRegex selects its path.
# That is everything clang-tidy reads (the tool, its configuration, its flags, each file and where
# it was found), so a stale "clean" would need a change to none of it; and a change to a header
# re-checks exactly the TUs that include it. Preprocessing costs a small part of clang-tidy's own
# parse of the same TU. Paths under the checkout are hashed relative to it (a fresh clone elsewhere
# reuses the cache; HeaderFilterRegex's verdict on each full path is in the key); paths outside
# stay absolute. A TU whose compiler is not Clang, or whose preprocessing fails, is never cached.
# The summary line says how many TUs came from the cache.
# The cache is ${XDG_CACHE_HOME:-$HOME/.cache}/pools-tidy; POOLS_TIDY_CACHE=DIR moves it and
# POOLS_TIDY_CACHE=off turns it off. An entry not used for 30 days is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-clang}
db=$build/compile_commands.json
[[ -f $db ]] || { echo "tidy.sh: no $db (configure first: cmake --preset clang)" >&2; exit 2; }
command -v clang-tidy >/dev/null || { echo "tidy.sh: clang-tidy not found (Debian package clang-tidy)" >&2; exit 2; }

mapfile -t all < <(python3 - "$db" "$PWD" <<'PY'
import json, sys
db, root = sys.argv[1], sys.argv[2] + "/"
files = {e["file"] for e in json.load(open(db))}
for f in sorted(files):
    rel = f[len(root):] if f.startswith(root) else None
    if rel and rel.split("/")[0] in ("common", "variants", "server", "bench", "course") \
            and not rel.startswith("common/model/") and "/tests/compile_fail/" not in rel:
        print(rel)
PY
)
tests=() code=()
for f in "${all[@]}"; do
  if [[ $f == */tests/* || $f == course/*/check.cpp ]]; then tests+=("$f"); else code+=("$f"); fi
done

cache=${POOLS_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pools-tidy}
if [[ $cache != off ]]; then
  mkdir -p "$cache" || { echo "tidy.sh: cannot create the cache folder $cache (POOLS_TIDY_CACHE)" >&2; exit 2; }
fi
start=$SECONDS
log=$(mktemp)
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
# Each TU: clang-tidy -p BUILD -quiet [-checks=...] FILE (what run-clang-tidy runs), nproc at a
# time, unless the cache holds its key. Its output goes to $log; the number of TUs taken from the
# cache and the TUs clang-tidy failed on (a file that does not parse) to $out.
rc=0
python3 - "$build" "$PWD" "$cache" "$(nproc)" "$log" \
  "${code[@]/#/C:}" "${tests[@]/#/T:}" >"$out" <<'PY' || rc=$?
import concurrent.futures, hashlib, json, os, re, shlex, shutil, subprocess, sys, tempfile, time

build, root, cache, jobs, log = sys.argv[1:6]
TEST_CHECKS = "-performance-inefficient-vector-operation,-performance-unnecessary-value-param"
units = [(a[2:], TEST_CHECKS if a[0] == "T" else "") for a in sys.argv[6:]]
tidy = shutil.which("clang-tidy")  # found: the script checked it before starting this
finding = re.compile(r"^[^ ]+:[0-9]+:[0-9]+: (warning|error):", re.M)
marker = re.compile(rb'^# [0-9]+ "((?:[^"\\]|\\.)*)"', re.M)
prefix = root.rstrip("/") + "/"
db = {}
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    db.setdefault(os.path.normpath(os.path.join(e["directory"], e["file"])), []).append(e)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def rel(text):
    """Paths under the checkout named relative to it, so a clone elsewhere has the same keys."""
    return text.replace(prefix, "@/")


def tool_identity():
    real = os.path.realpath(tidy)
    parts = [subprocess.run([tidy, "--version"], capture_output=True, text=True).stdout,
             real, sha(open(real, "rb").read())]
    ldd = subprocess.run(["ldd", real], capture_output=True, text=True).stdout
    for lib in re.findall(r"=> (\S+)", ldd):
        if re.search(r"clang|LLVM", lib, re.I):
            st = os.stat(lib)
            parts.append("%s %d %d" % (os.path.realpath(lib), st.st_size, st.st_mtime_ns))
    return "\n".join(parts)


memo = {}


def once(key, compute):
    # Threads may compute the same value twice; each result is the same, so that is harmless.
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def file_hash(path):
    def compute():
        try:
            return sha(open(path, "rb").read())
        except OSError:
            return "unreadable"
    return once(("file", path), compute)


def config_files(path):
    """The content of every .clang-tidy in the folders above path."""
    def compute():
        d, found = os.path.dirname(path), []
        while True:
            f = os.path.join(d, ".clang-tidy")
            if os.path.isfile(f):
                found.append(rel(f) + " " + file_hash(f))
            if d == os.path.dirname(d):
                return found
            d = os.path.dirname(d)
    return once(("configs", os.path.dirname(path)), compute)


def tidy_command(path, checks):
    return [tidy, "-p=" + build, "-quiet"] + (["-checks=" + checks] if checks else []) + [path]


def effective_config(path, checks):
    """clang-tidy's configuration for the TU (it reads the .clang-tidy files that apply)."""
    def compute():
        cmd = [tidy, "--dump-config", "-p=" + build] + (["-checks=" + checks] if checks else [])
        r = subprocess.run(cmd + [path], capture_output=True, text=True)
        if r.returncode != 0:
            return None
        m = re.search(r"^HeaderFilterRegex:\s*'((?:[^']|'')*)'\s*$", r.stdout, re.M)
        try:
            header_filter = re.compile(m.group(1).replace("''", "'") if m else "")
        except re.error:
            return None  # not a regex Python reads as clang-tidy does: no key
        return r.stdout, header_filter
    return once(("config", os.path.dirname(path), checks), compute)


DROP_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ"}
DROP = {"-c", "-MD", "-MMD"}


def command_key(entry):
    """The compile command less its output; and the command that preprocesses instead."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    kept, i = [], 0
    while i < len(args):
        a = args[i]
        if a in DROP_WITH_VALUE:
            i += 2
            continue
        if a in DROP or any(a.startswith(d) and len(a) > len(d) for d in DROP_WITH_VALUE):
            i += 1
            continue
        kept.append(a)
        i += 1
    return kept, kept[:1] + ["-E"] + kept[1:]


def key_of(path, checks):
    """The cache key of a TU, or None when it cannot have one."""
    config = effective_config(path, checks)
    entries = db.get(path, [])
    if config is None or not entries:
        return None
    dump, header_filter = config
    h = hashlib.sha256()
    for part in [once(("tool",), tool_identity), rel(" ".join(tidy_command(path, checks))), dump]:
        h.update(part.encode() + b"\0")
    files = {path: {path}}  # each file read, by its normal path: the names it was included by
    for entry in entries:
        kept, preprocess = command_key(entry)
        if "clang" not in os.path.basename(kept[0]):
            return None  # the compiler must read the code as clang-tidy's Clang does
        h.update(rel(entry["directory"]).encode() + b"\0" + rel(json.dumps(kept)).encode() + b"\0")
        r = subprocess.run(preprocess, cwd=entry["directory"], capture_output=True)
        if r.returncode != 0:
            return None
        h.update(r.stdout.replace(prefix.encode(), b"@/") + b"\0")
        for name in set(marker.findall(r.stdout)):
            name = name.decode(errors="surrogateescape")
            if not name.startswith("<"):  # <built-in>, <command line>
                f = os.path.normpath(os.path.join(entry["directory"], name))
                files.setdefault(f, set()).add(name)
    for f in sorted(files):
        # clang-tidy reports a header's findings when HeaderFilterRegex finds its name; the name
        # holds the checkout's path, which the rest of the key leaves out.
        selected = "1" if f == path or any(header_filter.search(n) for n in files[f]) else "0"
        h.update(("%s %s %s\n" % (rel(f), file_hash(f), selected)).encode())
        for c in config_files(f):
            h.update(c.encode() + b"\n")
    return h.hexdigest()


def entry_path(key):
    return os.path.join(cache, key[:2], key)


def check(unit):
    """Runs clang-tidy on one TU unless the cache holds it: (from cache, output, failed)."""
    relative, checks = unit
    path = os.path.join(root, relative)
    key = key_of(path, checks) if cache != "off" else None
    if key:
        try:
            os.utime(entry_path(key))  # a hit; used now, so it is not pruned
            return True, "", False
        except FileNotFoundError:
            pass
    command = tidy_command(path, checks)
    r = subprocess.run(command, capture_output=True, text=True, errors="replace")
    output = " ".join(command) + "\n" + r.stdout + r.stderr
    clean = r.returncode == 0 and not finding.search(re.sub(r"\x1b\[[0-9;]*m", "", output))
    if key and clean:
        os.makedirs(os.path.dirname(entry_path(key)), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry_path(key)))
        with os.fdopen(fd, "w") as f:
            f.write(relative + "\n")
        os.replace(tmp, entry_path(key))  # whole or absent, whoever else runs at the same time
    return False, output, r.returncode != 0 and relative


with concurrent.futures.ThreadPoolExecutor(int(jobs)) as pool:
    results = list(pool.map(check, units))
with open(log, "w") as f:
    f.writelines(output for _, output, _ in results)
print(sum(hit for hit, _, _ in results))
failed = [name for _, _, name in results if name]
print(" ".join(failed))
if cache != "off":
    month_ago = time.time() - 30 * 86400
    for d in os.scandir(cache):
        if d.is_dir() and len(d.name) == 2:
            for e in os.scandir(d.path):
                try:
                    if e.stat().st_mtime < month_ago:
                        os.remove(e.path)
                except FileNotFoundError:
                    pass  # renamed or removed by a run beside this one
sys.exit(3 if failed else 0)
PY
if [[ $rc -ne 0 && $rc -ne 3 ]]; then
  echo "tidy.sh: the clang-tidy driver failed (exit $rc)" >&2
  exit 2
fi
cached=$(sed -n 1p "$out")
failed=$(sed -n 2p "$out")
findings=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u || true)
count=$(grep -c . <<<"$findings" || true)
echo "tidy.sh: ${#all[@]} translation units (${#tests[@]} tests, $cached from the cache), $count findings, $((SECONDS - start)) s"
if [[ $count -gt 0 ]]; then
  sed "s|^$PWD/||" <<<"$findings"
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  # Failed without a finding in the usual form: show the end of what it printed.
  echo "tidy.sh: clang-tidy failed without a finding on: $failed; its last lines:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
