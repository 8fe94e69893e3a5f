#!/usr/bin/env python3
"""The functions and operators the extension's SQL scripts call, read with
PostgreSQL's own parser (pglast, Debian's python3-pglast).

CREATE EXTENSION and ALTER EXTENSION UPDATE run the scripts as a superuser
with search_path set to the extension's schema.  A function or operator
called there without a schema is resolved among those of that schema too,
and one planted there by a role that may create in it, with argument types
closer to the call than the built-in one (quote_ident(name) for a name
argument), would run as the superuser.  So every call the scripts make is
qualified: with pg_catalog, with queue_storage (the extension's own
schema), or with @extschema@ for a function the scripts create themselves.

What is read: every statement of every script; column defaults, CHECK
constraints, index expressions and predicates are part of the statements;
the bodies of DO blocks and of functions in SQL or PL/pgSQL, expression by
expression.  What counts as a call: a function call (aggregates and window
functions included), an operator (OPERATOR(pg_catalog.=) is qualified;
IN, NOT IN, BETWEEN, LIKE, IS DISTINCT FROM, NULLIF, a simple CASE, JOIN
USING and NATURAL JOIN name operators that cannot be qualified, so they are
refused; ORDER BY ... USING and EXCLUDE ... WITH take a qualified one), and
dynamic SQL in PL/pgSQL, which cannot be read and is refused.

    python3 test/script_calls.py check [sql directory]   the unqualified calls
    python3 test/script_calls.py names [sql directory]   every name called:
        "function <name> <number of arguments>", "operator <name>",
        "prefix operator <name>", one a line

test/layout.py runs the check; test/t/022_planted_in_schema.pl plants a
function or operator under every name the scripts call.
"""
import glob
import json
import os
import re
import sys

from pglast import parser

QUALIFIERS = {'pg_catalog', 'queue_storage'}
EXTSCHEMA = '@extschema@'

# the operators a construct that takes no operator name resolves by name
CONSTRUCTS = {
    'AEXPR_BETWEEN': ['>=', '<='], 'AEXPR_NOT_BETWEEN': ['<', '>'],
    'AEXPR_BETWEEN_SYM': ['>=', '<='], 'AEXPR_NOT_BETWEEN_SYM': ['<', '>'],
}
QUALIFIABLE = {'AEXPR_OP', 'AEXPR_OP_ANY', 'AEXPR_OP_ALL'}


class Call:
    def __init__(self, kind, schema, name, arity, where, problem=None):
        self.kind, self.schema, self.name = kind, schema, name
        self.arity, self.where, self.problem = arity, where, problem


def strings(nodes):
    return [n['String']['sval'] for n in nodes or [] if 'String' in n]


def prepared(text):
    """The script as the parser takes it: the \\echo line blanked (lines
    kept), @extschema@ a quoted identifier ("@extschema@" still, so that
    the check can tell our schema)."""
    text = re.sub(r'^\\echo.*$', '', text, flags=re.M)
    return text.replace(EXTSCHEMA, '"%s"' % EXTSCHEMA)


class Reader:
    def __init__(self, path, text=None):
        self.path = path
        self.text = text
        self.calls = []
        self.ours = set()	# the functions the scripts create in @extschema@

    def line(self, text, offset):
        return text.encode()[:offset].decode(errors='ignore').count('\n') + 1

    def read(self):
        text = prepared(self.text if self.text is not None else open(self.path).read())
        tree = json.loads(parser.parse_sql_json(text))
        for raw in tree.get('stmts', []):
            start = raw.get('stmt_location', 0)
            length = raw.get('stmt_len') or len(text.encode()) - start
            source = text.encode()[start:start + length].decode()
            # the statement's first line, after the comments before it
            lead = re.match(r'(\s|--[^\n]*|/\*.*?\*/)*', source, re.S).end()
            first = self.line(text, start + len(source[:lead].encode()))
            self.walk(raw['stmt'], lambda loc: '%s:%d' % (
                os.path.basename(self.path), self.line(text, loc) if loc is not None else first),
                source, first)
        return self

    def walk(self, node, where, source, first):
        """Every call in a parse tree (JSON of libpg_query)."""
        if isinstance(node, list):
            for item in node:
                self.walk(item, where, source, first)
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key == 'FuncCall':
                name = strings(value.get('funcname'))
                self.add('function', name, len(value.get('args') or []), where(value.get('location')))
            elif key == 'A_Expr':
                kind = value.get('kind', 'AEXPR_OP')
                name = strings(value.get('name'))
                arity = 2 if 'lexpr' in value else 1
                loc = where(value.get('location'))
                if kind in CONSTRUCTS:
                    for op in CONSTRUCTS[kind]:
                        self.add('operator', [op], 2, loc,
                                 '%s (BETWEEN) cannot be qualified' % op)
                elif kind in QUALIFIABLE:
                    self.add('operator', name, arity, loc)
                else:
                    self.add('operator', name, 2, loc,
                             None if len(name) > 1 else
                             '%s (%s) cannot be qualified' % (name[-1], kind[len('AEXPR_'):]))
            elif key == 'SubLink' and value.get('subLinkType') in (
                    'ANY_SUBLINK', 'ALL_SUBLINK', 'ROWCOMPARE_SUBLINK'):
                name = strings(value.get('operName')) or None
                self.add('operator', name or ['='], 2, where(value.get('location')),
                         None if name else '= (IN a subquery) cannot be qualified')
            elif key == 'CaseExpr' and value.get('arg'):
                self.add('operator', ['='], 2, where(value.get('location')),
                         '= (CASE x WHEN) cannot be qualified')
            elif key == 'SortBy' and value.get('useOp'):
                self.add('operator', strings(value['useOp']), 2, where(value.get('location')))
            elif key == 'JoinExpr' and (value.get('usingClause') or value.get('isNatural')):
                self.add('operator', ['='], 2, where(None),
                         '= (JOIN USING or NATURAL JOIN) cannot be qualified')
            elif key == 'Constraint' and value.get('exclusions'):
                for pair in value['exclusions']:
                    items = pair.get('List', {}).get('items', [])
                    ops = items[1].get('List', {}).get('items') if len(items) > 1 else None
                    self.add('operator', strings(ops), 2, where(value.get('location')))
            elif key == 'CreateFunctionStmt':
                self.function(value, where, source, first)
            elif key == 'DoStmt':
                options = {d['DefElem']['defname']: d['DefElem']['arg'] for d in value.get('args', [])}
                body = options['as']['String']['sval']
                language = options.get('language', {}).get('String', {}).get('sval', 'plpgsql')
                self.body(language, body, where, first)
            self.walk(value, where, source, first)

    def function(self, stmt, where, source, first):
        name = strings(stmt.get('funcname'))
        if len(name) == 2 and name[0] in (EXTSCHEMA, 'queue_storage'):
            self.ours.add(name[1])
        options = {d['DefElem']['defname']: d['DefElem']['arg'] for d in stmt.get('options', [])}
        language = options.get('language', {}).get('String', {}).get('sval', 'sql').lower()
        body = strings(options.get('as', {}).get('List', {}).get('items'))
        if language == 'plpgsql':
            self.plpgsql(source, where, first)
        elif language == 'sql' and body:
            self.sql(body[0], lambda loc: where(None))

    def body(self, language, body, where, first):
        if language.lower() != 'plpgsql':
            self.add('body', ['LANGUAGE ' + language], 0, where(None), 'a body that cannot be read')
            return
        tag = '$queue_body$'
        self.plpgsql('CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS %s%s%s'
                     % (tag, body, tag), where, first)

    def plpgsql(self, statement, where, first):
        tree = json.loads(parser.parse_plpgsql_json(statement))

        def visit(node, lineno):
            if isinstance(node, list):
                for item in node:
                    visit(item, lineno)
                return
            if not isinstance(node, dict):
                return
            lineno = node.get('lineno', lineno)
            for key, value in node.items():
                if key in ('PLpgSQL_stmt_dynexecute', 'PLpgSQL_stmt_dynfors') or key == 'dynquery':
                    self.add('body', ['EXECUTE'], 0, self.at(where, first, lineno),
                             'dynamic SQL cannot be checked')
                if key == 'PLpgSQL_expr':
                    self.sql(value['query'], lambda loc, n=lineno: self.at(where, first, n), expr=True)
                else:
                    visit(value, lineno)
        visit(tree, 1)

    @staticmethod
    def at(where, first, lineno):
        file = where(None).split(':')[0]
        return '%s:%d' % (file, first + lineno - 1)

    def sql(self, query, where, expr=False):
        """A statement, or a PL/pgSQL expression or assignment."""
        candidates = [query]
        if expr:
            candidates += ['SELECT ' + query,
                           re.sub(r'^\s*[\w."]+(\[[^]]*\])*\s*:?=', 'SELECT ', query, count=1)]
        for candidate in candidates:
            try:
                tree = json.loads(parser.parse_sql_json(candidate))
            except parser.ParseError:
                continue
            self.walk(tree.get('stmts', []), where, candidate, 1)
            return
        self.add('body', [query[:40]], 0, where(None), 'an expression that does not parse')

    def add(self, kind, name, arity, where, problem=None):
        schema = name[0] if len(name) > 1 else None
        if problem is None and schema is None:
            problem = '%s not schema-qualified' % name[-1]
        self.calls.append(Call(kind, schema, name[-1], arity, where, problem))


def scripts(directory):
    return sorted(glob.glob(os.path.join(directory, 'queue--*.sql')))


def read_all(directory):
    readers = [Reader(path).read() for path in scripts(directory)]
    ours = set().union(*(r.ours for r in readers)) if readers else set()
    return readers, ours


def problems(directory, readers=None):
    """(number of calls read, the unqualified ones as 'file:line: what')"""
    if readers is None:
        readers, ours = read_all(directory)
    else:
        ours = set().union(*(r.ours for r in readers))
    found, total = [], 0
    for reader in readers:
        for call in reader.calls:
            total += call.kind != 'body'
            problem = call.problem
            if problem is None and call.schema not in QUALIFIERS:
                if not (call.schema == EXTSCHEMA and call.kind == 'function' and call.name in ours):
                    problem = '%s qualified with %s' % (call.name, call.schema)
            if problem:
                found.append('%s: %s' % (call.where, problem))
    return total, found


# Each construct the check must catch, once; test/layout.py checks that
# every line of it is found (a parser that changed its trees would
# otherwise let the check pass on anything).
SAMPLE = r'''
CREATE TABLE t (a text DEFAULT lower('X'), b int CHECK (b IN (1, 2)));
CREATE INDEX i ON t (upper(a)) WHERE b <> 0;
CREATE TABLE e (c int4range, EXCLUDE USING gist (c WITH &&));
SELECT 1 FROM t JOIN t u USING (a) WHERE b BETWEEN 1 AND 2 AND a LIKE 'x%';
SELECT NULLIF(a, 'x'), CASE b WHEN 1 THEN 2 END, b IS DISTINCT FROM 3 FROM t ORDER BY a USING <;
SELECT 1 WHERE 1 IN (SELECT 1) AND 2 = ANY (SELECT 2);
CREATE FUNCTION @extschema@.f() RETURNS int LANGUAGE sql AS 'SELECT abs(-1)';
DO $$
DECLARE v text := quote_ident('x');
BEGIN
	IF length(v) > 0 THEN PERFORM pg_sleep(0); END IF;
	EXECUTE 'SELECT 1';
END
$$;
SELECT pg_catalog.lower('x'), @extschema@.f(), 1 OPERATOR(pg_catalog.+) 1;
SELECT public.lower('x'), @extschema@.g();
'''
SAMPLE_FOUND = [
    'lower not', '= (IN)', 'upper not', '<> not', '&& not', '= (JOIN', '>= (BETWEEN)',
    '<= (BETWEEN)', '~~ (LIKE)', '= (NULLIF)', '= (CASE', '= (DISTINCT)', '< not',
    '= (IN a subquery)', '= not', 'abs not', 'quote_ident not', 'length not', '> not',
    'pg_sleep not', 'dynamic SQL', 'lower qualified with public', 'g qualified with @extschema@',
]


def sample_problems():
    """What of SAMPLE_FOUND the check misses in SAMPLE, and what it finds
    there beyond it (the qualified calls)."""
    _, found = problems(None, [Reader('sample.sql', SAMPLE).read()])
    missed = [what for what in SAMPLE_FOUND if not any(what in f for f in found)]
    extra = [f for f in found if not any(what in f for what in SAMPLE_FOUND)]
    return missed, extra


def names(directory):
    readers, _ = read_all(directory)
    out = set()
    for reader in readers:
        for call in reader.calls:
            if call.kind == 'function':
                out.add('function %s %d' % (call.name, call.arity))
            elif call.kind == 'operator':
                out.add(('operator %s' if call.arity == 2 else 'prefix operator %s') % call.name)
    return sorted(out)


if __name__ == '__main__':
    command = sys.argv[1] if len(sys.argv) > 1 else 'check'
    directory = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'sql')
    if command == 'names':
        print('\n'.join(names(directory)))
    elif command == 'check':
        total, found = problems(directory)
        print('\n'.join(found))
        print('%d calls read, %d not qualified' % (total, len(found)), file=sys.stderr)
        sys.exit(1 if found else 0)
    else:
        sys.exit('usage: script_calls.py check|names [sql directory]')
