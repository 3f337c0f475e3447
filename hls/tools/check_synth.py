#!/usr/bin/env python3
"""Rejects constructs outside the synthesizable HLS subset in design sources (hls/design).

Usage: check_synth.py FILE...                 exit 1 if any file has a violation (printed file:line: rule)
       check_synth.py --expect-reject FILE... exit 0 only if every file is rejected (tests the checker)
Lexical checks on comment- and string-stripped text, so prose may mention what code may not use.
"""
import re
import sys

RULES = [
    (r'\bnew\b', 'dynamic allocation (new)'),
    (r'\bdelete\b(?!\s*;)', 'dynamic deallocation (delete)'),
    (r'\b(malloc|calloc|realloc|free)\s*\(', 'C heap allocation'),
    (r'\bstd::(vector|map|unordered_map|set|unordered_set|list|deque|string|shared_ptr|unique_ptr|function)\b',
     'standard container or dynamic type'),
    (r'\b(printf|fprintf|puts|std::cout|std::cerr|cout|cerr|fopen)\b', 'host I/O'),
    (r'#\s*include\s*<(iostream|cstdio|stdio\.h|fstream|vector|map|string|memory|thread)>', 'host-only header'),
    (r'\b(throw|try|catch)\b', 'exceptions'),
    (r'\bvirtual\b', 'virtual functions'),
    (r'\b(goto|setjmp|longjmp)\b', 'non-structured control flow'),
]


def strip(text):
    """Blanks comments, string and char literals, keeping line numbers."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif text[i] in '"\'':
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == '\\' else 1
            out.append(q + q)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


def functions(code):
    """(name, body, first line) of each function definition at brace depth 0 or inside a namespace."""
    found = []
    for m in re.finditer(r'\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(const\s*)?(override\s*)?\{', code):
        name = m.group(1)
        if name in ('if', 'for', 'while', 'switch', 'catch', 'return', 'sizeof'):
            continue
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {'{': 1, '}': -1}.get(code[j], 0)
            j += 1
        found.append((name, code[m.end():j - 1], code.count('\n', 0, m.start()) + 1))
    return found


def violations(path):
    code = strip(open(path, encoding='utf-8').read())
    lines = code.split('\n')
    found = []
    for no, line in enumerate(lines, 1):
        for pattern, rule in RULES:
            if re.search(pattern, line):
                found.append((no, rule))
    for name, body, no in functions(code):
        if re.search(r'(?<![\w.>:])' + re.escape(name) + r'\s*\(', body):
            found.append((no, 'recursion (%s calls itself)' % name))
    # Mutable state outside functions: 'static' (or a plain variable) at namespace scope that is not const.
    depth_ns, depth = [], 0
    for no, line in enumerate(lines, 1):
        stripped = line.strip()
        at_scope = depth == len(depth_ns)
        if at_scope and re.match(r'(static\s+)?(?!const|constexpr|typedef|using|template|return|namespace|struct|class|enum|extern|#)'
                                 r'[A-Za-z_][\w:<>, ]*\s+[A-Za-z_]\w*(\[[^\]]*\])*\s*(=[^;(]*)?;', stripped) \
                and 'static_assert' not in stripped:
            found.append((no, 'mutable global variable'))
        if at_scope and re.match(r'static\s+(?!const|constexpr|inline)[^()]*;', stripped):
            found.append((no, 'static mutable global'))
        for ch in line:
            if ch == '{':
                if re.search(r'\bnamespace\b[^{]*$', line[:line.index('{')]) and depth == len(depth_ns):
                    depth_ns.append(depth)
                depth += 1
            elif ch == '}':
                depth -= 1
                if depth_ns and depth_ns[-1] == depth:
                    depth_ns.pop()
    return sorted(set(found))


def main(argv):
    expect_reject = argv[:1] == ['--expect-reject']
    files = argv[1:] if expect_reject else argv
    if not files:
        print(__doc__)
        return 2
    status = 0
    for path in files:
        found = violations(path)
        for no, rule in found:
            print('%s:%d: not synthesizable: %s' % (path, no, rule))
        if expect_reject and not found:
            print('%s: expected a rejection, found nothing' % path)
            status = 1
        if not expect_reject and found:
            status = 1
    if not expect_reject and status == 0:
        print('%d design file(s) within the synthesizable subset' % len(files))
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
