#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes a Gradescope autograder for one exercise (docs/course/instructor.md, "Gradescope").
#
#   scripts/gradescope.sh EXERCISE OUT.zip
#
# The zip holds, at its top (Gradescope unzips it into /autograder/source/):
#   setup.sh         run once when the image is built, as root: installs the Debian packages
#                    through scripts/bootstrap.sh (when scripts/course-needs.sh finds one missing),
#                    configures the tree and builds the exercise once
#                    (so a student's grading compiles their file only)
#   run_autograder   run per submission: copies the student's files from /autograder/submission/
#                    into place, grades them with the students' own grader, and writes
#                    /autograder/results/results.json (course/tools/gradescope_results.py: the tests of
#                    the exercise's fixed rubric with their max_score, scored from the check's
#                    result channel; 0 on each, with the reason, when the static check refuses
#                    the files or they do not compile)
#   tree/            this tree without course/solutions, course/cheats, and course/instructor but its
#                    hidden tests (course/instructor/hidden/)
#   exercise         the exercise's id
# What a student uploads: the files of the exercise page's "What to hand in" (02..06: the FILES of
# the exercise's pools_add_exercise call; 01: pool.hpp), at the top of the upload or in folders.
# Gradescope's root, /autograder, moves with the environment variable AUTOGRADER_ROOT: CI runs a
# zip in a temporary folder that way (ctest -R gradescope_autograder).
#
# Exit 0 when the zip is written; 2 for a bad argument (unknown exercise, OUT not ending in .zip,
# its folder missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: scripts/gradescope.sh EXERCISE OUT.zip" >&2; exit 2; }
bad() { echo "gradescope.sh: $1" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
id=$1 zip=$2
known=$(cd "$root/course/exercises" && ls -d */ | tr -d / | tr '\n' ' ')
[[ $id =~ ^[0-9a-z][0-9a-z_-]*$ && -d $root/course/exercises/$id ]] ||
  bad "no exercise '$id' (course/exercises/$id/); known exercises: $known"
[[ $zip == *.zip ]] || bad "'$zip' does not end in .zip"
[[ -d $(dirname "$zip") ]] || bad "no folder '$(dirname "$zip")' for '$zip'"
zip=$(cd "$(dirname "$zip")" && pwd)/$(basename "$zip")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$root/course/tools/copy-tree.sh" "$root" "$stage/tree"
# The reference solution goes with the hidden tests: the pool the speed tests (01, 03) measure
# against in the same run (course/instructor/hidden/EXERCISE/reference/).
if [[ -d $stage/tree/course/solutions/$id ]]; then
  mkdir -p "$stage/tree/course/instructor/hidden/$id"
  cp -a "$stage/tree/course/solutions/$id" "$stage/tree/course/instructor/hidden/$id/reference"
fi
rm -rf "$stage"/tree/course/solutions "$stage"/tree/course/cheats "$stage"/tree/grade
# Of the instructor's material, only the hidden tests stay (course/instructor/hidden/): the zip is
# the instructor's, uploaded to Gradescope, never handed out.
find "$stage/tree/course/instructor" -mindepth 1 -maxdepth 1 ! -name hidden -exec rm -rf {} + 2>/dev/null || true
echo "$id" >"$stage/exercise"

cat >"$stage/setup.sh" <<'SETUP'
#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gradescope runs this once, as root, when it builds the autograder's image (scripts/gradescope.sh).
set -euo pipefail
ag=${AUTOGRADER_ROOT:-/autograder}
cd "$ag/source/tree"
id=$(cat "$ag/source/exercise")
cp -a "course/exercises/$id" "$ag/source/start-files"  # run_autograder restores it before each submission
# Gradescope's image starts bare: what the exercise needs is missing, and bootstrap.sh (as root)
# installs it. Where everything is present already (CI), nothing is installed.
if ! scripts/course-needs.sh "$id" --class 2>/dev/null; then
  scripts/bootstrap.sh
  scripts/course-needs.sh "$id" --class
fi
# The project is proven with GCC 12 and later; an image whose g++ is older (Ubuntu 22.04's is 11)
# gets g++-12 from its archive, and the build below (the one every submission reuses) is
# configured with it.
if [[ $(g++ -dumpversion | cut -d. -f1) -lt 12 ]]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends g++-12
  export CC=gcc-12 CXX=g++-12
fi
# Build the exercise once, so that grading a submission compiles the student's files only.
if [[ $id == 01-first-pool ]]; then
  # The build is configured with the one pool every submission becomes (pools::student).
  scripts/new-pool.sh student >/dev/null
  GRADE_CONFIGURE_ARGS="-DPOOLS_VARIANTS=student -DPOOLS_BUILD_BENCH=OFF" \
    scripts/grade-exercise.sh "$id" student --out "$ag/source/warmup" >"$ag/source/warmup.log" 2>&1 || true  # the scaffold fails
  if [[ ! -x build/course/course_01_check_student ]]; then
    tail -40 "$ag/source/warmup/build.log" "$ag/source/warmup.log" >&2 || true
    echo "setup.sh: the warm-up build of course_01_check_student failed (above); the autograder cannot grade" >&2
    exit 1
  fi
  rm -rf variants/student "$ag/source/warmup" "$ag/source/warmup.log"
else
  scripts/grade-exercise.sh "$id" --out "$ag/source/warmup" >"$ag/source/warmup.log" 2>&1 || true  # the start fails
  # ... its check, that is; a build that failed is the image's fault, and every submission would
  # score "does not compile": stop here, loudly.
  if ! compgen -G "build*/course/exercises/$id/exercise_$id" >/dev/null; then
    tail -40 "$ag/source/warmup/build.log" "$ag/source/warmup.log" >&2 || true
    echo "setup.sh: the warm-up build of exercise_$id failed (above); the autograder cannot grade" >&2
    exit 1
  fi
  rm -rf "$ag/source/warmup" "$ag/source/warmup.log"
fi
# How run_autograder will isolate the student's code in this image (course/tools/grade-sandbox.sh):
# one line in the image's build log for the instructor.
isolation=$(course/tools/grade-sandbox.sh -- true 2>&1 | head -1)
echo "setup.sh: the grading isolation in this image: ${isolation:-full (the user pools-grader, private namespaces, limits)}"
SETUP

cat >"$stage/run_autograder" <<'RUN'
#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gradescope runs this once per submission (scripts/gradescope.sh): the student's files into place,
# the students' own grader, then results/results.json.
set -uo pipefail
ag=${AUTOGRADER_ROOT:-/autograder}
tree=$ag/source/tree
id=$(cat "$ag/source/exercise")
sub=$ag/submission
out=$ag/results
grade=$out/grade
rm -rf "$grade"
mkdir -p "$grade"
cd "$tree" || exit 1
export CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
# The starting point back (setup.sh kept it), then the student's files over it, found by name.
rm -rf variants/student "course/exercises/$id"
cp -a "$ag/source/start-files" "course/exercises/$id"
if ! course/tools/place-submission.sh "$id" "$sub" . student >"$grade/output.txt" 2>&1; then
  # Every test of the rubric, 0, with the reason.
  python3 course/tools/grade_run.py zero "$id" "$grade" "$(grep -m1 '  FAIL  ' "$grade/output.txt" | sed 's/^  FAIL  //')" >/dev/null
elif [[ $id == 01-first-pool ]]; then
  timeout 1800 scripts/grade-exercise.sh "$id" student --out "$grade" --isolated >/dev/null 2>&1
else
  timeout 1800 scripts/grade-exercise.sh "$id" --out "$grade" --isolated >/dev/null 2>&1
fi
[[ -f course/exercises/$id/ANSWERS.md ]] && cp "course/exercises/$id/ANSWERS.md" "$grade/ANSWERS.md"
python3 course/tools/gradescope_results.py "$id" "$grade" "$out/results.json"
RUN
chmod +x "$stage/setup.sh" "$stage/run_autograder"

python3 - "$stage" "$zip" <<'PY'
import os, sys, zipfile
stage, out = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for folder, _, files in os.walk(stage):
        for f in sorted(files):
            path = os.path.join(folder, f)
            info = zipfile.ZipInfo.from_file(path, os.path.relpath(path, stage))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as fh:
                z.writestr(info, fh.read())  # from_file keeps the mode bits: the scripts stay executable
PY
echo "gradescope: wrote $zip (exercise $id; upload it as the assignment's autograder)"
