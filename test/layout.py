#!/usr/bin/env python3
"""The shape of the repository, checked (TAP output).

- src/: no two files use each other, directly or around a circle (read
  from the built objects with nm: who defines a symbol another uses);
  every SQL function lives in src/api/ in the file named after it.
- The rules of a message (src/messages/rules.h) are spelled nowhere else:
  no statement compares expires_at, visible_at, pop_receipt or
  dequeue_count with a parameter, sorts in claim order or measures a size
  by itself, and the C functions of the rules are defined in rules.c only.
- The SQL scripts of sql/: a full install script for the default version
  of queue.control, and every function and operator a script calls
  schema-qualified (test/script_calls.py, with PostgreSQL's parser).
- The documents: README.md at most 300 lines with CREATE EXTENSION in its
  first 60, every file under docs/ linked from it, every relative link of
  the documents resolving, and no reference to documents outside the
  repository.

Run after a build: python3 test/layout.py [repository, default .]
"""
import glob
import json
import os
import re
import subprocess
import sys

repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
results = []


def check(ok, name, detail=''):
    results.append((bool(ok), name, detail))


def rel(path):
    return os.path.relpath(path, repo)


# --- src/: who uses whom, from the objects --------------------------------

sources = sorted(glob.glob(os.path.join(repo, 'src', '**', '*.c'), recursive=True))
objects = {s: s[:-2] + '.o' for s in sources}
missing = [rel(o) for o in objects.values() if not os.path.exists(o)]
check(not missing, 'every source file of src/ is built', ', '.join(missing))

defined = {}
used = {}
for source, obj in objects.items():
    if not os.path.exists(obj):
        continue
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    used[source] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRC':
            defined[parts[2]] = source
        elif len(parts) == 2 and parts[0] == 'U':
            used[source].add(parts[1])

uses = {s: {defined[sym] for sym in syms if sym in defined and defined[sym] != s}
        for s, syms in used.items()}


def cycles(graph):
    """The strongly connected components of more than one file."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


circles = cycles(uses)
check(uses and not circles, 'no two files of src/ use each other, directly or around a circle',
      '; '.join(' <-> '.join(rel(f) for f in c) for c in circles))

# every SQL function in the file of its name under src/api/
functions = set()
for script in glob.glob(os.path.join(repo, 'sql', 'queue--*.sql')):
    functions |= set(re.findall(r"MODULE_PATHNAME',\s*'(queue_\w+)'", open(script).read()))
misplaced = []
for function in sorted(functions):
    home = function[len('queue_'):]
    home = {'revoke': 'grant', 'resume': 'pause', 'unsubscribe': 'subscribe',
            'unschedule': 'schedule'}.get(home, home)
    if home.endswith('_batch'):
        home = home[:-len('_batch')]
    expected = os.path.join(repo, 'src', 'api', home + '.c')
    if defined.get(function) != expected:
        misplaced.append('%s in %s' % (function, rel(defined[function]) if function in defined else 'nothing'))
check(functions and not misplaced,
      'each of the %d SQL functions is in src/api/<its name>.c' % len(functions), ', '.join(misplaced))

# --- the rules of a message, spelled once ---------------------------------

rules_home = {os.path.join(repo, 'src', 'messages', 'rules.h'),
              os.path.join(repo, 'src', 'messages', 'rules.c')}
def without_comments(text):
    """C comments blanked out, lines kept where they were."""
    return re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)


texts = {path: without_comments(open(path).read())
         for path in sources + glob.glob(os.path.join(repo, 'src', '**', '*.h'), recursive=True)
         if path not in rules_home}
spelled = [
    ('alive', r'expires_at\s*(<=|>=|<|>)\s*\$'),
    ('visible', r'visible_at\s*(<=|>=|<|>)\s*\$'),
    ('receipt', r'pop_receipt\s*=\s*(\$|\()'),
    ('poison limit', r'dequeue_count\s*(<=|>=|<|>)\s*\$'),
    ('claim order', r'ORDER BY\s+\w*\.?visible_at'),
    ('size', r'octet_length|toast_raw_datum_size|JsonbToCString'),
]
for rule, pattern in spelled:
    hits = ['%s:%d' % (rel(path), text[:m.start()].count('\n') + 1)
            for path, text in texts.items() for m in re.finditer(pattern, text)]
    check(not hits, 'the rule "%s" is spelled only in src/messages/rules.{h,c}' % rule, ', '.join(hits))

rule_functions = ['queue_message_alive_in', 'queue_message_visible', 'queue_receipt_matches',
                  'queue_message_size', 'queue_check_size', 'queue_dequeue_limit',
                  'queue_at_dequeue_limit']
elsewhere = [f for f in rule_functions
             if defined.get(f) != os.path.join(repo, 'src', 'messages', 'rules.c')]
check(not elsewhere, 'the C functions of the rules are defined in src/messages/rules.c',
      ', '.join(elsewhere))

# --- the SQL scripts --------------------------------------------------------

control = open(os.path.join(repo, 'queue.control')).read()
default_version = (re.findall(r"^default_version = '([^']+)'", control, re.M) or ['?'])[0]
check(os.path.exists(os.path.join(repo, 'sql', 'queue--%s.sql' % default_version)),
      'sql/ has a full install script of the default version, queue--%s.sql' % default_version)

# A function or operator a script calls unqualified can be captured by one
# planted in the extension's schema, and would run as the superuser who
# installs or updates the extension.
try:
    sys.path.insert(0, os.path.join(repo, 'test'))
    import script_calls
except ImportError as error:
    for name in ('the check of the scripts finds each kind of unqualified call in a sample',
                 'every function and operator the scripts of sql/ call is schema-qualified'):
        check(False, name, 'test/script_calls.py needs python3-pglast: %s' % error)
else:
    missed, extra = script_calls.sample_problems()
    check(not missed and not extra,
          'the check of the scripts finds each kind of unqualified call in a sample, and nothing else',
          'missed: %s; found beyond: %s' % (', '.join(missed), ', '.join(extra)))
    read, unqualified = script_calls.problems(os.path.join(repo, 'sql'))
    check(read > 0 and not unqualified,
          'every function and operator the scripts of sql/ call is schema-qualified (%d calls)' % read,
          '; '.join(unqualified) if unqualified else 'no call read')

# --- the documents --------------------------------------------------------

readme_path = os.path.join(repo, 'README.md')
readme = open(readme_path).read().splitlines()
check(len(readme) <= 300, 'README.md has at most 300 lines', '%d lines' % len(readme))
first = next((i + 1 for i, line in enumerate(readme) if 'CREATE EXTENSION' in line), None)
check(first is not None and first <= 60, 'README.md shows CREATE EXTENSION in its first 60 lines',
      'line %s' % first)

docs = sorted(glob.glob(os.path.join(repo, 'docs', '**', '*.md'), recursive=True))
readme_text = '\n'.join(readme)
unlinked = [rel(d) for d in docs if '](%s)' % rel(d) not in readme_text]
check(docs and not unlinked, 'every file under docs/ is linked from README.md', ', '.join(unlinked))

documents = [readme_path, os.path.join(repo, 'CONTRIBUTING.md'),
             os.path.join(repo, 'BENCHMARKS.md'), os.path.join(repo, 'bench', 'README.md'),
             os.path.join(repo, 'clients', 'python', 'README.md'),
             os.path.join(repo, 'clients', 'node', 'README.md')] + docs
broken = []
for doc in documents:
    if not os.path.exists(doc):
        broken.append(rel(doc) + ' (missing)')
        continue
    text = re.sub(r'```.*?```', '', open(doc).read(), flags=re.S)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', target) or target.startswith('#'):
            continue
        path = target.split('#')[0]
        if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), path))):
            broken.append('%s -> %s' % (rel(doc), target))
check(not broken, 'every relative link of the documents resolves', ', '.join(broken))

# The extension's version is written by hand in queue.control only; every
# other place that states it says the same (X.Y, or X.Y.0 where a package
# format asks for three numbers).
def read(*parts):
    path = os.path.join(repo, *parts)
    return open(path).read() if os.path.exists(path) else ''


def first(pattern, text, flags=0):
    found = re.findall(pattern, text, flags)
    return found[0] if found else None


meta = json.loads(read('META.json') or '{}')
readme = read('README.md')
stated = {
    'META.json version': meta.get('version'),
    'META.json provides': meta.get('provides', {}).get('queue', {}).get('version'),
    'debian/changelog': first(r'^queue \(([^)]+)\)', read('debian', 'changelog'), re.M),
    'README.md .deb': first(r'postgresql-\d+-queue_([0-9.]+)_amd64\.deb', readme),
    'README.md zip': first(r'queue-([0-9.]+)\.zip', readme),
    'clients/python/pyproject.toml': first(r'^version = "([^"]+)"', read('clients', 'python', 'pyproject.toml'), re.M),
    'pgqueue.__version__': first(r'__version__ = "([^"]+)"', read('clients', 'python', 'pgqueue', '__init__.py')),
    'clients/node/package.json': json.loads(read('clients', 'node', 'package.json') or '{}').get('version'),
}
differing = ['%s: %s' % (where, version) for where, version in stated.items()
             if version not in (default_version, default_version + '.0')]
check(not differing,
      'every file that states the extension\'s version says queue.control\'s %s' % default_version,
      ', '.join(differing))

outside = []
for path in documents + sources + glob.glob(os.path.join(repo, 'src', '**', '*.h'), recursive=True):
    if not os.path.exists(path):
        continue
    for number, line in enumerate(open(path), 1):
        if re.search(r'SPEC\.md|STYLE\.md|issue #[0-9]', line):
            outside.append('%s:%d' % (rel(path), number))
check(not outside, 'no document or source refers to documents outside the repository',
      ', '.join(outside))

print('1..%d' % len(results))
for number, (ok, name, detail) in enumerate(results, 1):
    print('%s %d - %s' % ('ok' if ok else 'not ok', number, name))
    if not ok and detail:
        print('# ' + detail)
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
