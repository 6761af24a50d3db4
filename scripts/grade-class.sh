#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grades a whole class's submissions of one exercise (docs/course/instructor.md, "Grading a class").
#
#   scripts/grade-class.sh EXERCISE SUBMISSIONS_DIR OUT [-j N] [--timeout S] [--keep]
#
# SUBMISSIONS_DIR holds one folder per student, named after the student's login:
#   SUBMISSIONS_DIR/<login>/<file>   the exercise's files, as its page's "What to hand in" says
#                                    (02..06: the FILES of its pools_add_exercise call, e.g.
#                                    nested_wait.hpp; 01: pool.hpp, and tests/pool_test.cpp if any)
# Each student is graded in a copy of its own of the tree, made from one pristine copy (the source
# tree without course/solutions, course/cheats, and course/instructor but its hidden tests), configured with only the
# libraries the exercise links and built through ccache, which every copy shares (CCACHE_BASEDIR is
# the copy: what one copy compiled, the next finds). So one student's compile error, crash or hang
# stays in that student's copy and result; at most N students are graded at once (-j, default
# nproc), each build with one job; a student whose grading outlives --timeout (default 900 s) is
# stopped and marked so.
#   02..07: scripts/grade-exercise.sh EXERCISE --isolated in the copy: the students' own command,
#           the static check first, the build and the check as the user pools-grader in private
#           namespaces with limits (course/tools/grade-sandbox.sh; not root: limits only, said so).
#   01:     the same, on the student's pool: scripts/grade-exercise.sh 01-first-pool NAME --isolated
#           (the copy configured with that pool alone), scored on 01's rubric.
# The hidden tests (course/instructor/hidden/EXERCISE/) run, and the reference solution of EXERCISE
# goes with them (course/instructor/hidden/EXERCISE/reference/): the pool the speed tests (01, 03)
# measure against in the same run.
#
# Logins become valid pool names (01's pools::NAME, and every student's folder in OUT): lowercase,
# each run of other characters one "_", "s_" before a leading digit, at most 32 characters; a C++
# keyword, a name the build uses or an existing variant gets "_2"; two logins that map to the same
# name get "_2", "_3", ... in sorted login order. So the mapping is the same on every run; it is the
# "name" column of the results (scripts/new-pool.sh --check is the rule).
#
# OUT gets results.csv and results.json (one row per student: login, name, verdict, score of the
# exercise's fixed rubric and its max_score, exit code, seconds, the failed requirements, and one
# column per test of course/exercises/EXERCISE/rubric.json, the same columns on every run; 01: the
# conformance rules passed per build; "answers": whether ANSWERS.md, the written answers, was handed
# in), and OUT/<name>/ each student's output, report.json and ANSWERS.md (to grade by hand).
# Exit 0 when every student was graded (whatever the verdicts); 1 when grading itself failed (the
# starting tree would not configure); 2 for a bad argument.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: scripts/grade-class.sh EXERCISE SUBMISSIONS_DIR OUT [-j N] [--timeout S] [--keep]" >&2
  exit 2
}
bad() { echo "grade-class.sh: $1" >&2; exit 2; }

positional=()
jobs=$(nproc)
limit=900
keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    -j) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || bad "-j needs a number of students at once (1 or more)"; jobs=$2; shift 2 ;;
    --timeout) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || bad "--timeout needs seconds"; limit=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage ;;
    -*) bad "unknown option '$1'" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[[ ${#positional[@]} -eq 3 ]] || usage
id=${positional[0]} subs=${positional[1]} out=${positional[2]}
known=$(cd "$root/course/exercises" && ls -d */ | tr -d / | tr '\n' ' ')
[[ $id =~ ^[0-9a-z][0-9a-z_-]*$ && -d $root/course/exercises/$id ]] ||
  bad "no exercise '$id' (course/exercises/$id/); known exercises: $known"
[[ -d $subs ]] || bad "no submissions folder '$subs'"
subs=$(cd "$subs" && pwd)
mapfile -t logins < <(cd "$subs" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort)
[[ ${#logins[@]} -gt 0 ]] || bad "'$subs' holds no student folders (SUBMISSIONS_DIR/<login>/<files>)"
mkdir -p "$out" || bad "cannot create the output folder '$out'"
out=$(cd "$out" && pwd)
[[ $out != "$subs" && $out != "$subs"/* ]] || bad "OUT must not be inside SUBMISSIONS_DIR (it would be graded as a student)"

"$root/scripts/course-needs.sh" "$id" --class || exit 1

# How the copy is configured: only the variants the exercise links (scripts/grade-exercise.sh).
exercise_dir=$root/course/exercises/$id
if [[ -f $exercise_dir/CMakeLists.txt ]]; then
  # Every pools::<name> in the exercise's CMakeLists.txt (its LINK) that is a folder of variants/;
  # none: the smallest variant, futures, since a configuration needs one.
  variants=$(grep -oE 'pools::[a-z][a-z0-9_]*' "$exercise_dir/CMakeLists.txt" | sed 's/^pools:://' | sort -u |
    while read -r name; do [[ -d $root/variants/$name ]] && echo "$name"; done | paste -sd ';' -)
  export GRADE_CONFIGURE_ARGS="-DPOOLS_VARIANTS=${variants:-futures} -DPOOLS_BUILD_BENCH=OFF"
fi

# Logins -> names (file comment). Sorted logins, so collisions number the same way every run.
declare -A taken=()
names=()
for login in "${logins[@]}"; do
  base=$(tr 'A-Z' 'a-z' <<<"$login" | sed -E 's/[^a-z0-9_]+/_/g; s/_+/_/g; s/^_//; s/_$//')
  [[ -n $base ]] || base=student
  [[ $base =~ ^[a-z] ]] || base=s_$base
  base=${base:0:29}
  name=$base
  n=1
  while [[ -n ${taken[$name]:-} ]] || ! "$root/scripts/new-pool.sh" --check "$name" >/dev/null 2>&1; do
    n=$((n + 1))
    name=${base}_$n
  done
  taken[$name]=1
  names+=("$name")
done

started=$SECONDS
echo "grade-class: $id, ${#logins[@]} submissions from $subs, $jobs at once, into $out" >&2
tree=$out/.tree
rm -rf "$tree" "$out/.work"
"$root/course/tools/copy-tree.sh" "$root" "$tree" || { echo "grade-class.sh: cannot copy the tree" >&2; exit 1; }
if [[ -d $tree/course/solutions/$id ]]; then
  mkdir -p "$tree/course/instructor/hidden/$id"
  cp -a "$tree/course/solutions/$id" "$tree/course/instructor/hidden/$id/reference"
fi
rm -rf "$tree"/course/solutions "$tree"/course/cheats "$tree"/grade "$tree"/build*
# Of the instructor's material, only the hidden tests stay (course/instructor/hidden/: workloads the
# hand-out does not have, which the checks include when present).
find "$tree/course/instructor" -mindepth 1 -maxdepth 1 ! -name hidden -exec rm -rf {} + 2>/dev/null

# Grades one student in a copy of their own; writes OUT/<name>/result.json. Runs in a subshell.
grade_one() {
  local login=$1 name=$2 sub=$subs/$1 dest=$out/$2 copy=$out/.work/$2 t0=$SECONDS rc
  rm -rf "$dest" "$copy"
  mkdir -p "$dest" "$out/.work"
  cp -a "$tree" "$copy"
  export CCACHE_BASEDIR=$copy CCACHE_NOHASHDIR=1 POOLS_BUILD_JOBS=1
  if ! "$root/course/tools/place-submission.sh" "$id" "$sub" "$copy" "$name" >"$dest/output.txt" 2>&1; then
    rc=1
  elif [[ $id == 01-first-pool ]]; then
    (cd "$copy" && export GRADE_CONFIGURE_ARGS="-DPOOLS_VARIANTS=$name -DPOOLS_BUILD_BENCH=OFF" &&
      timeout --kill-after=10 "$limit" scripts/grade-exercise.sh "$id" "$name" --build-dir build-class --out "$dest" \
        --isolated) >"$dest/grade.txt" 2>&1
    rc=$?
  else
    (cd "$copy" && timeout --kill-after=10 "$limit" scripts/grade-exercise.sh "$id" --build-dir build-class --out "$dest" --isolated) >"$dest/grade.txt" 2>&1
    rc=$?
  fi
  [[ $rc -eq 124 || $rc -eq 137 ]] && echo "  FAIL  grading did not finish within $limit s and was stopped" >>"$dest/output.txt"
  # The written answers, collected for grading by hand.
  [[ -f $copy/course/exercises/$id/ANSWERS.md ]] && cp "$copy/course/exercises/$id/ANSWERS.md" "$dest/ANSWERS.md"
  python3 - "$login" "$name" "$rc" "$((SECONDS - t0))" "$dest" <<'PY'
import json, os, sys
login, name, rc, seconds, dest = sys.argv[1:]
report, failures = os.path.join(dest, "report.json"), []
card = json.load(open(report)) if os.path.exists(report) else {}
tests = {}  # the rubric's test -> score (02..07), or conformance rule (build) -> 1/0 (01)
if "tests" in card:  # grade-exercise.sh: the exercise's fixed rubric
    failures = card["failures"]
    tests = {t["name"]: t["score"] for t in card["tests"]}
elif "failures" in card:
    failures = card["failures"]
elif "conformance" in card:  # grade.sh's card (exercise 01)
    failures = [f"{kind} build failed" for kind, b in card["builds"].items() if not b["built"]]
    failures += [f"{rule} ({kind})" for rule, by in card["conformance"].items() for kind, r in by.items() if not r["passed"]]
    failures += [f"tests_{name} ({kind})" for kind, t in card["tests"].items() if t and not t["passed"]]
    tests = {f"{rule} ({kind})": int(by.get(kind, {}).get("passed", False)) for rule, by in card["conformance"].items()
             for kind in ("release", "asan", "tsan")}
if not failures or int(rc) in (124, 137):
    text = open(os.path.join(dest, "output.txt"), errors="replace").read() if os.path.exists(os.path.join(dest, "output.txt")) else ""
    failures += [l.strip()[6:] for l in text.splitlines() if l.strip().startswith("FAIL  ")]
passed = int(rc) == 0
if not passed and not failures:
    failures = [f"the grader exited {rc} (see {name}/output.txt)"]
json.dump({"login": login, "name": name, "passed": passed, "exit_code": int(rc), "seconds": int(seconds),
           "score": sum(tests.values()), "tests": tests, "failures": failures,
           "answers": os.path.exists(os.path.join(dest, "ANSWERS.md"))},
          open(os.path.join(dest, "result.json"), "w"), indent=2)
PY
  [[ $keep -eq 1 ]] || rm -rf "$copy"
  echo "grade-class: $login -> $name: exit $rc in $((SECONDS - t0)) s" >&2
}

# Warm-up: the starting point built once in the pristine tree, with the students' configuration,
# so that ccache holds every object the copies share (the libraries, and the check when the
# student's file does not change its compile) before N students compile at once.
echo "grade-class: warm-up: building the starting point once (fills ccache for every copy)" >&2
warm=$SECONDS
if [[ $id == 01-first-pool ]]; then
  (cd "$tree" && scripts/new-pool.sh warmup >/dev/null && CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1 \
    GRADE_CONFIGURE_ARGS="-DPOOLS_VARIANTS=warmup -DPOOLS_BUILD_BENCH=OFF" \
    scripts/grade-exercise.sh "$id" warmup --build-dir build-class --out "$out/.warmup" --isolated) >/dev/null 2>&1
  rm -rf "$tree/variants/warmup" "$tree/build-class"
else
  (cd "$tree" && CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1 scripts/grade-exercise.sh "$id" --build-dir build-class \
    --out "$out/.warmup" --isolated) >/dev/null 2>&1
  rm -rf "$tree/build-class"
fi
rm -rf "$out/.warmup"
echo "grade-class: warm-up took $((SECONDS - warm)) s" >&2

for i in "${!logins[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  grade_one "${logins[$i]}" "${names[$i]}" &
done
wait
[[ $keep -eq 1 ]] || rm -rf "$tree" "$out/.work"

python3 - "$out" "$((SECONDS - started))" "$root/course/exercises/$id/rubric.json" "${names[@]}" <<'PY'
import csv, json, os, sys
out, seconds, rubric_path, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
rubric = json.load(open(rubric_path)) if os.path.exists(rubric_path) else {}
columns = [(t["name"], t["max_score"]) for t in rubric.get("tests", [])]  # 02..07: the same every run
rows = []
for name in names:
    path = os.path.join(out, name, "result.json")
    rows.append(json.load(open(path)) if os.path.exists(path) else
                {"login": "?", "name": name, "passed": False, "exit_code": -1, "seconds": 0,
                 "failures": ["no result: the grading of this student did not run to its end"]})
max_score = sum(m for _, m in columns)
for r in rows:
    r.setdefault("tests", {})
    r.setdefault("score", 0)
    r.setdefault("answers", False)
    if columns:  # every rubric test in every row, 0 where the student's run never reached it
        r["tests"] = {n: r["tests"].get(n, 0) for n, _ in columns}
        r["score"] = sum(r["tests"].values())
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"seconds": seconds, "rubric": [{"name": n, "max_score": m} for n, m in columns],
               "max_score": max_score, "answers_points": rubric.get("answers_points", 0), "students": rows}, f, indent=2)
with open(os.path.join(out, "results.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["login", "name", "verdict", "score", "max_score", "exit_code", "seconds", "failed_requirements",
                "answers"] + [f"{n} ({m})" for n, m in columns])
    for r in rows:
        w.writerow([r["login"], r["name"], "PASS" if r["passed"] else "FAIL", r["score"], max_score or "",
                    r["exit_code"], r["seconds"], " | ".join(r["failures"]), "ANSWERS.md" if r["answers"] else ""]
                   + [r["tests"][n] for n, _ in columns])
passed = sum(r["passed"] for r in rows)
print(f"grade-class: {passed} of {len(rows)} passed in {seconds} s; {out}/results.csv and results.json")
PY
