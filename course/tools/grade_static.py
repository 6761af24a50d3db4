#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The static check of a submission: run by the grader before it builds a student's files.

  python3 course/tools/grade_static.py EXERCISE FILE...

A student's file is compiled into the check's own program, so whatever it can do, the check can
not see: print the check's lines, end the process with the check's exit status, switch the check's
macros off. The score no longer comes from what the process prints (course/tools/grade_run.py reads a
result channel only the check's harness writes), and this check makes the rest impossible in the
source: a submission may only

  - include the headers its exercise allows (the standard headers of concurrency and containers,
    and the project headers the exercise's own files use: course/exercises/<id>/rubric.json,
    "headers"); no <iostream>, <cstdio>, <cstdlib>, <fstream>, <filesystem>, <unistd.h>, ...
  - use the preprocessor for #include, #pragma once and its own include guard, nothing else
    (no #define or #undef of anything but that guard, no #if, no _Pragma);
  - call nothing that ends the process, does I/O, reads or changes the environment, starts a
    process or makes a system call (the names in FORBIDDEN below), and contain no inline assembly;
  - define no variable at namespace scope and no static data member that is not constexpr or
    constinit (their initializers would run before main, before the check starts);
  - not name the check's harness (namespace course, main), nor declare again a type the exercise
    gives (rubric.json, "given": e.g. 02's blocking_pool), nor call what only the given code may
    call (rubric.json, "forbidden": e.g. 03's deque_events).

Each violation is one line "FILE:LINE: rule: what" on stdout; exit 1 when there is one, 0 when
the files are clean, 2 for a bad argument. Comments and string literals are not looked at.
"""
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Standard headers a pool, a deque, a channel or a session may need; none of them does I/O or
# ends the process (those are <cstdio>, <iostream>, <cstdlib>, <cassert>, <csignal>, ...).
STANDARD_HEADERS = set("""
algorithm array atomic barrier bit cctype chrono climits cmath compare concepts condition_variable
coroutine cstddef cstdint cstring deque exception functional future initializer_list iterator latch
limits list map memory mutex new numeric optional queue random ranges semaphore set shared_mutex
span stack stdexcept stop_token string string_view system_error thread tuple type_traits
unordered_map unordered_set utility variant vector
""".split())

# name -> the rule it breaks. Matched as whole identifiers, wherever they occur (std::exit,
# ::write, exit): a submission has no reason to spell any of them.
FORBIDDEN = {}
# Names that are also ordinary member names (a channel's send and close, a socket's read): these
# are refused only as calls of the global or std function, "name(", "::name(" or "std::name(";
# a member is called through ".", "->" or "this->", and declared after its type.
AMBIGUOUS = set("read write send recv close open system signal raise kill remove rename pipe dup clone creat "
                "pread pwrite writev sendto sendmsg".split())
KEYWORDS_BEFORE_CALL = {"return", "co_return", "co_await", "co_yield", "else", "do", "throw", "case"}
for _names, _why in [
    ("exit _Exit _exit quick_exit abort atexit at_quick_exit terminate",
     "ends the process (the check decides when the program ends)"),
    ("printf fprintf sprintf snprintf vprintf vfprintf dprintf puts fputs putchar fputc putc fwrite "
     "fflush perror write writev pwrite send sendto sendmsg read pread recv open openat creat fopen "
     "freopen fdopen close dup dup2 dup3 pipe mmap cout cerr clog wcout wcerr stdout stderr stdin "
     "ostream ofstream ifstream fstream filebuf streambuf basic_ostream filesystem",
     "does I/O (a submission computes; the check reports)"),
    ("getenv secure_getenv setenv putenv unsetenv clearenv environ __environ",
     "reads or changes the environment"),
    ("system popen syscall fork vfork clone execl execlp execle execv execvp execvpe fexecve "
     "posix_spawn posix_spawnp kill raise signal sigaction pthread_kill ptrace dlopen dlsym "
     "setjmp longjmp prctl seccomp chdir unlink remove rename",
     "makes a system call or starts a process"),
    ("asm __asm __asm__", "inline assembly"),
    ("_Pragma __pragma", "preprocessor redefinition (a pragma in disguise)"),
    ("course main", "names the check's own harness"),
    ("__attribute__ __attribute __declspec", "an attribute the compiler acts on (a constructor run before main?)"),
]:
    for _n in _names.split():
        FORBIDDEN[_n] = _why

TOKEN = re.compile(r"""
    (?P<ws>[ \t\f\v\r]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^(\s]{0,16})\((?:.|\n)*?\)(?P=delim)")
  | (?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])+')
  | (?P<num>\.?[0-9](?:[0-9a-zA-Z_.']|[eEpP][+-])*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>::|->|\.\.\.|<<=|>>=|<=>|[-+*/%&|^!=<>]=|&&|\|\||\+\+|--|<<|%:|<%|%>|<:|:>|.)
""", re.S | re.X)


def tokens(text):
    """(kind, value, line) for each token; preprocessor lines come whole, as kind 'pp'."""
    out, line, at_line_start, i = [], 1, True, 0
    text = text.replace("\\\n", " \n")  # continuation lines: one logical line, line count kept
    while i < len(text):
        if at_line_start:
            m = re.match(r"[ \t]*(#|%:)", text[i:])
            if m:
                end = text.find("\n", i)
                end = len(text) if end < 0 else end
                directive = re.sub(r"/\*.*?\*/|//.*", " ", text[i:end])
                out.append(("pp", directive.strip(), line))
                i = end
                continue
        m = TOKEN.match(text, i)
        kind = m.lastgroup
        value = m.group(0)
        i = m.end()
        if kind == "nl":
            line += 1
            at_line_start = True
            continue
        line_here = line
        line += value.count("\n")
        if kind in ("ws", "lcomment", "bcomment"):
            continue
        at_line_start = False
        if kind == "raw":
            kind = "str"
        out.append((kind, value, line_here))
    return out


def check_preprocessor(pp, allowed_headers, problems, where):
    guard = None
    first = True
    for _, text, line in pp:
        directive = re.sub(r"^(#|%:)\s*", "", text)
        word = directive.split()[0] if directive.split() else ""
        rest = directive[len(word):].strip()
        if word == "include":
            m = re.fullmatch(r'<([^<>"]+)>|"([^<>"]+)"', rest)
            header = m and (m.group(1) or m.group(2))
            if not header:
                problems.append(f"{where(line)}: include: '#include {rest}' is not a header name")
            elif header not in allowed_headers and header not in STANDARD_HEADERS:
                problems.append(f"{where(line)}: include: <{header}> is not allowed in this exercise "
                                f"(allowed: the headers its files include, and the standard headers "
                                f"of containers and concurrency; no I/O, no <cstdlib>)")
        elif word == "pragma" and rest == "once":
            pass
        elif word == "ifndef" and first and re.fullmatch(r"[A-Za-z_]\w*", rest):
            guard = rest
        elif word == "define" and guard is not None and rest == guard:
            guard = guard + " "  # defined once; a second #define of it is a redefinition
        elif word == "endif" and guard is not None:
            pass
        elif word == "":
            pass
        else:
            problems.append(f"{where(line)}: preprocessor: '#{word}' is not allowed (only #include, "
                            f"#pragma once and the file's own include guard: a macro could change the check)")
        first = False


def skip_group(toks, i, open_, close):
    """Index after the group that opens at toks[i]."""
    depth = 0
    while i < len(toks):
        if toks[i][1] == open_:
            depth += 1
        elif toks[i][1] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


FUNDAMENTAL = set("""bool char char8_t char16_t char32_t wchar_t short int long signed unsigned float double
size_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std
static inline thread_local const volatile extern""".split())


def constant_initialized(values):
    """A fundamental or pointer variable initialized from literals only: constant initialization,
    no code runs (int n = 0;  static inline thread_local T* p = nullptr;  bool b{false};)."""
    if "=" in values:
        k = values.index("=")
        decl, init = values[:k], values[k + 1:]
    elif "{" in values:
        k = values.index("{")
        decl, init = values[:k], [v for v in values[k + 1:] if v != "}"]
    else:
        decl, init = values, []
    if not decl:
        return False
    literal = all(re.fullmatch(r"[0-9][0-9a-zA-Z_.']*|'.*'|true|false|nullptr|-", v) for v in init)
    type_words = [v for v in decl[:-1] if v not in ("::",)]
    pointer = "*" in decl
    return literal and (pointer or all(w in FUNDAMENTAL for w in type_words))


def check_statement(stmt, scope, problems, where):
    """A declaration at namespace or class scope (its tokens, without the final ';')."""
    values = [t[1] for t in stmt]
    while len(values) >= 2 and values[0] in ("public", "private", "protected") and values[1] == ":":
        stmt, values = stmt[2:], values[2:]
    if not values:
        return
    if values[0] == "template":  # template <...> declaration: look at the declaration
        end = skip_group(stmt, 1, "<", ">") if len(values) > 1 and values[1] == "<" else 1
        stmt, values = stmt[end:], values[end:]
        if not values:
            return
    if values[0] in ("using", "typedef", "static_assert", "friend", "namespace", "extern", "concept") or \
            any(v in ("constexpr", "constinit", "consteval", "concept", "operator") for v in values):
        return
    if scope == "class" and "static" not in values:
        return  # a non-static member: initialized by its object's constructor, not before main
    # What is left is a variable unless it is a function declaration: name ( parameters ) ...
    depth = 0
    for k, (kind, v, _) in enumerate(stmt):
        if v == "=" and depth == 0:
            break  # name = ...: a variable
        if v in ("(", "[", "{"):
            if v == "(" and depth == 0 and k > 0 and stmt[k - 1][0] == "id":
                args = stmt[k + 1:skip_group(stmt, k, "(", ")") - 1]
                looks_like_values = any(a[0] in ("num", "str", "chr") or a[1] in ("this", "{", "[", "true",
                                                                                   "false", "nullptr")
                                        for a in args)
                if not looks_like_values:
                    return  # a function declaration
                break
            depth += 1
        elif v in (")", "]", "}"):
            depth -= 1
    if values[0] in ("class", "struct", "union", "enum") and "=" not in values and "{" not in values \
            and len([v for v in values if re.fullmatch(r"\w+", v)]) <= 3:
        return  # a forward declaration
    if constant_initialized(values):
        return
    kind = "a static data member" if scope == "class" else "a namespace-scope variable"
    problems.append(f"{where(stmt[0][2])}: static-initialization: {kind} ('{' '.join(values)[:60]}') must be "
                    f"constexpr or constinit: its initializer would run before main, before the check starts")


def check_scopes(toks, problems, where):
    """Walks namespace and class scopes; function bodies and initializers are skipped."""
    stack = ["namespace"]
    stmt = []
    i = 0
    while i < len(toks):
        kind, v, line = toks[i]
        if v in ("{", "<%"):
            values = [t[1] for t in stmt]
            if "namespace" in values[:3]:
                stack.append("namespace")
                stmt = []
                i += 1
                continue
            if values[:1] == ["extern"] and len(values) >= 2 and values[1].startswith('"'):
                stack.append("namespace")
                stmt = []
                i += 1
                continue
            if not stmt:  # a block of its own (a constructor's body after its member initializers)
                i = skip_group(toks, i, "{", "}")
                continue
            head = skip_group(stmt, 1, "<", ">") if values[:2] == ["template", "<"] else 0
            depth, first_paren, class_key = 0, None, None
            for k, t in enumerate(stmt):
                if k < head:
                    continue
                if t[1] in ("(", "["):
                    if depth == 0 and first_paren is None:
                        first_paren = k
                    depth += 1
                elif t[1] in (")", "]"):
                    depth -= 1
                elif depth == 0 and class_key is None and t[1] in ("class", "struct", "union", "enum"):
                    class_key = k
            if "=" in values or (first_paren is None and class_key is None):
                # An initializer (x = {...}, T x{...}): part of the statement, checked at its ';'.
                end = skip_group(toks, i, "{", "}")
                stmt = stmt + toks[i:end]
                i = end
                continue
            if class_key is not None and (first_paren is None or class_key < first_paren) and \
                    values[class_key] != "enum":
                stack.append("class")
                stmt.append(("class-body", "{...}", line))
                stmt_saved = stmt
                stmt = []
                stack_stmt.append(stmt_saved)
                i += 1
                continue
            # A function body (or an enum's enumerators): nothing in it runs before main.
            i = skip_group(toks, i, "{", "}")
            if values and values[0] == "enum" or class_key is not None:
                stmt.append(("class-body", "{...}", line))
            else:
                stmt = []
            continue
        if v in ("}", "%>"):
            if len(stack) > 1:
                closed = stack.pop()
                if closed == "class":
                    stmt = stack_stmt.pop()
                else:
                    stmt = []
            i += 1
            continue
        if v == ";":
            values = [t[1] for t in stmt]
            if "{...}" in values:  # class X {...} declarators;  : a variable when one follows
                after = values[values.index("{...}") + 1:]
                if any(re.fullmatch(r"[A-Za-z_]\w*", a) and a not in ("const", "volatile") for a in after) and \
                        not ("constexpr" in values or "constinit" in values or values[:1] == ["typedef"]):
                    problems.append(f"{where(stmt[0][2])}: static-initialization: a variable declared with its "
                                    f"class ('{' '.join(after)[:40]}') must be constexpr or constinit")
            elif stmt:
                check_statement(stmt, stack[-1], problems, where)
            stmt = []
            i += 1
            continue
        stmt.append(toks[i])
        i += 1


stack_stmt = []


def check_file(path, display, rubric, problems):
    text = open(path, encoding="utf-8", errors="replace").read()
    where = lambda line: f"{display}:{line}"  # noqa: E731
    toks = tokens(text)
    check_preprocessor([t for t in toks if t[0] == "pp"], set(rubric.get("headers", [])), problems, where)
    code = [t for t in toks if t[0] != "pp"]
    # Ambiguous names the file declares itself (a member "void read()"): an unqualified call is its own.
    own = {v for k, (kind, v, _) in enumerate(code[1:], 1)
           if v in AMBIGUOUS and k + 1 < len(code) and code[k + 1][1] == "(" and
           ((code[k - 1][0] == "id" and code[k - 1][1] not in KEYWORDS_BEFORE_CALL) or code[k - 1][1] in (">", "*", "&"))}
    for k, (kind, v, line) in enumerate(code):
        if kind == "id" and v in AMBIGUOUS:
            before = code[k - 1] if k > 0 else ("punct", ";", line)
            called = k + 1 < len(code) and code[k + 1][1] == "("
            if before[1] == "::":
                free = k < 2 or code[k - 2][1] == "std" or code[k - 2][0] != "id"
            else:
                free = before[1] not in (".", "->") and not (
                    (before[0] == "id" and before[1] not in KEYWORDS_BEFORE_CALL) or before[1] in (">", "*", "&", "~"))
            if before[1] != "::" and v in own:
                free = False
            if called and free:
                hint = "" if before[1] == "::" else f" (a member of your own class: call it as this->{v}(...))"
                problems.append(f"{where(line)}: forbidden-name: '{v}(' calls the system's {v}, which "
                                f"{FORBIDDEN[v]}{hint}")
        elif kind == "id" and v.startswith("__builtin_"):
            problems.append(f"{where(line)}: forbidden-name: '{v}' is a compiler builtin (it can do I/O, trap or "
                            f"jump; a submission uses the standard library)")
        elif kind == "id" and v in ("constructor", "destructor", "init_priority") and k >= 2 and \
                code[k - 1][1] == "::" and code[k - 2][1] == "gnu":
            problems.append(f"{where(line)}: static-initialization: [[gnu::{v}]] runs code before or after main")
        elif kind == "id" and v in ("new", "delete") and k >= 1 and code[k - 1][1] == "operator":
            problems.append(f"{where(line)}: forbidden-name: 'operator {v}' of its own: a submission allocates "
                            f"with the standard allocator (a replaced one runs before main, in the check's code)")
        elif kind == "id" and v in FORBIDDEN:
            problems.append(f"{where(line)}: forbidden-name: '{v}' {FORBIDDEN[v]}")
        elif kind == "id" and v in rubric.get("forbidden", {}):
            problems.append(f"{where(line)}: forbidden-name: '{v}': {rubric['forbidden'][v]}")
        elif kind == "punct" and v in ("%:", "<:", ":>", "<%", "%>"):
            problems.append(f"{where(line)}: preprocessor: digraph '{v}' is not allowed")
    for k in range(len(code) - 1):
        if code[k][1] in ("class", "struct", "union", "enum", "using", "namespace", "typedef") and \
                code[k + 1][1] in rubric.get("given", []):
            problems.append(f"{where(code[k][2])}: given-type: '{code[k + 1][1]}' is given by the exercise; "
                            f"a submission must use it, not declare its own")
    stack_stmt.clear()
    check_scopes(code, problems, where)


def load_rubric(exercise):
    path = os.path.join(ROOT, "course", "exercises", exercise, "rubric.json")
    if not os.path.exists(path):
        raise SystemExit(f"grade_static.py: no rubric {path}")
    return json.load(open(path))


def main(argv):
    if len(argv) < 2:
        print("usage: grade_static.py EXERCISE FILE...", file=sys.stderr)
        return 2
    rubric = load_rubric(argv[0])
    problems = []
    for path in argv[1:]:
        if not os.path.isfile(path):
            print(f"grade_static.py: no file '{path}'", file=sys.stderr)
            return 2
        check_file(path, os.path.basename(path), rubric, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
