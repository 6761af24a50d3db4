#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves course/tools/grade_static.py (ctest -R grade_static): every starting point, reference solution
# and cheat that is not a forge-* passes it (a clean submission is not refused); each snippet below,
# put into 02's nested_wait.hpp, is refused with its rule named; a bad argument exits 2.
#
#   course/tests/check_grade_static.sh SOURCE_TREE
set -uo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_grade_static: $*" >&2; exit 1; }
check=(python3 "$src/course/tools/grade_static.py")

"${check[@]}" >/dev/null 2>&1; [[ $? -eq 2 ]] || fail "no arguments: not exit 2"
"${check[@]}" 02-nested-wait "$work/missing.hpp" >/dev/null 2>&1; [[ $? -eq 2 ]] || fail "a missing file: not exit 2"

n=0
for dir in "$src"/course/exercises/0*/ "$src"/course/solutions/0*/ "$src"/course/cheats/0*/*/; do
  [[ -d $dir ]] || continue
  case $dir in */forge-*/ | */calls-deque-events/) continue ;; esac
  id=$(basename "$(dirname "$dir")")
  [[ $dir == */exercises/* || $dir == */solutions/* ]] && id=$(basename "$dir")
  for f in "$dir"*.hpp "$dir"pool.hpp.in; do
    [[ -f $f && $(basename "$f") != blocking_pool.hpp && $(basename "$f") != work_deque.hpp &&
       $(basename "$f") != shared_queue_pool.hpp && $(basename "$f") != echo_server.hpp ]] || continue
    out=$("${check[@]}" "$id" "$f") || fail "$f ($id) refused: $out"
    n=$((n + 1))
  done
done
echo "ok: $n starting points, solutions and cheats pass the static check"

# Each case: the rule's regex, then the code put into nested_wait.hpp's namespace.
refused() {
  local rule=$1 code=$2 f=$work/nested_wait.hpp
  { echo "#pragma once"; echo '#include "blocking_pool.hpp"'; echo "namespace exercise {"; printf '%s\n' "$code"; echo "}"; } >"$f"
  out=$("${check[@]}" 02-nested-wait "$f")
  [[ $? -eq 1 ]] || fail "not refused: $code"
  grep -Eq -- "nested_wait.hpp:[0-9]+: $rule" <<<"$out" || fail "refused without /$rule/: $code -> $out"
  echo "ok: refused ($(head -1 <<<"$out" | cut -c1-100))"
}
refused "preprocessor: '#define'" '#define require(met, what) require(true, what)'
refused "preprocessor: '#undef'" '#undef NDEBUG'
refused "preprocessor: '#if'" '#if 1
#endif'
refused "include: <iostream>" '#include <iostream>'
refused "include: <cstdlib>" '#include <cstdlib>'
refused "forbidden-name: '_Exit'" 'inline void f() { std::_Exit(0); }'
refused "forbidden-name: 'quick_exit'" 'inline void f() { std::quick_exit(0); }'
refused "forbidden-name: 'printf'" 'inline void f() { printf("  ok    x\n"); }'
refused "forbidden-name: 'cout'" 'inline void f() { std::cout << 1; }'
refused "forbidden-name: 'write\('" 'inline void f() { ::write(1, "x", 1); }'
refused "forbidden-name: 'getenv'" 'inline const char* f() { return getenv("COURSE_RESULT_NONCE"); }'
refused "forbidden-name: 'environ'" 'inline char** f() { return environ; }'
refused "forbidden-name: 'system\('" 'inline int f() { return std::system("true"); }'
refused "forbidden-name: 'syscall'" 'inline long f() { return syscall(60, 0); }'
refused "forbidden-name: 'fork'" 'inline int f() { return fork(); }'
refused "forbidden-name: 'asm'" 'inline void f() { asm("nop"); }'
refused "forbidden-name: '__builtin_printf'" 'inline void f() { __builtin_printf("x"); }'
refused "forbidden-name: '_Pragma'" '_Pragma("GCC diagnostic ignored \"-Wall\"")'
refused "forbidden-name: 'course'" 'inline void f(course::report& r) { r.require(true, "x"); }'
refused "static-initialization: a namespace-scope variable" 'inline int counter = std::rand();'
refused "static-initialization: a namespace-scope variable" 'static std::string s("x");'
refused "static-initialization: a variable declared with its class" 'struct forge { forge() {} } forger;'
refused "static-initialization: a static data member" 'struct S { static inline std::mutex m; };'
refused "static-initialization: \[\[gnu::constructor\]\]" '[[gnu::constructor]] inline void f() {}'
refused "forbidden-name: '__attribute__'" '__attribute__((constructor)) inline void f() {}'
refused "forbidden-name: 'operator new'" 'struct S { static void* operator new(std::size_t); };'
refused "given-type: 'blocking_pool'" 'class blocking_pool {};'

# What stays allowed: constant initialization, members named like system calls, an include guard.
f=$work/nested_wait.hpp
cat >"$f" <<'CPP'
#ifndef NESTED_WAIT_HPP
#define NESTED_WAIT_HPP
#include <atomic>
#include "blocking_pool.hpp"
namespace exercise {
inline constexpr int limit = 3;
inline int plain = 0;
struct channel {
  bool send(int v) { return v > 0; }
  void close() {}
  static constexpr int capacity = 4;
  static inline thread_local channel* current = nullptr;
  std::atomic<int> count{0};
};
inline bool use(channel& c) { c.close(); return c.send(1) && c.count.load() == 0; }
inline constinit std::atomic<int> hits{0};
}  // namespace exercise
#endif
CPP
out=$("${check[@]}" 02-nested-wait "$f") || fail "a clean file refused: $out"
echo "ok: constant initialization, member names like send/close, an include guard: allowed"
echo "the static check refuses every forbidden construct, naming the rule, and lets clean files through"
