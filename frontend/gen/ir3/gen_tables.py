#!/usr/bin/env python3
"""Generate frontend/src/ir3/tables.rs from mesa's isaspec ir3 XML.

Usage: python3 frontend/gen/ir3/gen_tables.py <dir with ir3.xml> <out tables.rs>

The XML is not needed to build the crate: the output is committed. This script only
flattens the bitset hierarchy (patterns, fields, override cases, display templates),
the enums, and translates the C-like <expr> bodies into Rust functions.

Local additions (forms mesa added after the XML snapshot) are applied in `patch()`
and are clearly marked in the generated file.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

# (gpu_id used for gen filtering, table name suffix)
GENS = [(630, '630'), (700, '700')]


class Expr:
    def __init__(self, name, text):
        self.name = name
        self.text = text


class ExprRef:
    """Reference to a named <expr>, which may be defined later in the XML."""

    def __init__(self, name):
        self.name = name


class FieldDef:
    def __init__(self, name, low, high, kind, display=None, expr=None, params=None, assert_val=None):
        self.name = name
        self.low = low
        self.high = high
        self.kind = kind  # string kind or ('enum', name) or ('bitset', name)
        self.display = display
        self.expr = expr
        self.params = params or []
        self.assert_val = assert_val


class Case:
    def __init__(self, expr, display, fields):
        self.expr = expr
        self.display = display
        self.fields = fields


class Bitset:
    def __init__(self):
        self.name = None
        self.size = None
        self.extends = None
        self.gen_min = 0
        self.gen_max = (1 << 32) - 1
        self.patterns = []  # (low, high, str, gen_max or None)
        self.cases = []
        self.index = None
        self.parent = None


class Isa:
    def __init__(self):
        self.exprs = []
        self.expr_by_name = {}
        self.enums = {}
        self.enum_order = []
        self.bitsets = []

    def add_expr(self, name, text):
        text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S).strip().rstrip(';').strip()
        text = ' '.join(text.split())
        e = Expr(name, text)
        e.index = len(self.exprs)
        self.exprs.append(e)
        if name:
            self.expr_by_name[name] = e
        return e

    def parse_file(self, path):
        root = ET.parse(path).getroot()
        base = os.path.dirname(path)
        for el in root:
            if el.tag == 'import':
                self.parse_file(os.path.join(base, el.attrib['file']))
            elif el.tag == 'expr':
                self.add_expr(el.attrib['name'], el.text or '')
            elif el.tag == 'enum':
                vals = []
                for v in el.findall('value'):
                    vals.append((int(v.attrib['val'], 0), v.attrib['display']))
                self.enums[el.attrib['name']] = vals
                self.enum_order.append(el.attrib['name'])
            elif el.tag == 'bitset':
                self.parse_bitset(el)

    def expr_ref(self, el):
        """expr attribute (named) or inline <expr> child."""
        if 'expr' in el.attrib:
            name = el.attrib['expr']
            if name.startswith('#'):
                return ExprRef(name)
            return self.add_expr(None, name)
        sub = el.find('expr')
        if sub is not None:
            return self.add_expr(None, sub.text or '')
        return None

    def parse_fields(self, el):
        fields = []
        for f in el:
            if f.tag == 'field':
                low, high = pos_of(f)
                t = f.attrib.get('type', 'uint')
                params = [(p.attrib['name'], p.attrib.get('as', p.attrib['name'])) for p in f.findall('param')]
                fields.append(FieldDef(f.attrib['name'], low, high, t, f.attrib.get('display'), None, params))
            elif f.tag == 'derived':
                e = self.expr_ref(f)
                t = f.attrib.get('type', 'uint')
                width = int(f.attrib.get('width', '64'))
                fields.append(FieldDef(f.attrib['name'], 0, width - 1, t, f.attrib.get('display'), e))
            elif f.tag == 'assert':
                low, high = pos_of(f)
                fields.append(FieldDef('', low, high, 'assert', assert_val=int(f.text.strip(), 2)))
        return fields

    def parse_bitset(self, el):
        b = Bitset()
        b.name = el.attrib['name']
        b.size = int(el.attrib['size']) if 'size' in el.attrib else None
        b.extends = el.attrib.get('extends')
        for g in el.findall('gen'):
            if 'min' in g.attrib:
                b.gen_min = int(g.attrib['min'])
            if 'max' in g.attrib:
                b.gen_max = int(g.attrib['max'])
        for p in el.findall('pattern'):
            low, high = pos_of(p)
            b.patterns.append((low, high, p.text.strip(), None))
        for ov in el.findall('override'):
            e = self.expr_ref(ov)
            d = ov.find('display')
            b.cases.append(Case(e, clean_display(d), self.parse_fields(ov)))
        d = el.find('display')
        b.cases.append(Case(None, clean_display(d), self.parse_fields(el)))
        # Encoder defaults: <map> bodies that are plain constants tell how mesa's
        # encoder fills fields the text does not show.
        b.hints = []
        b.dst_fields = []
        for enc in el.findall('encode'):
            for m in enc.findall('map'):
                body = (m.text or '').strip()
                # A field other than DST* that encodes mesa's destination register
                # (ldib.b's SRC1) is reported as a destination.
                if re.fullmatch(r'src->dsts\[\d+\]', body) and not m.attrib['name'].startswith('DST'):
                    b.dst_fields.append(m.attrib['name'])
                if re.fullmatch(r'[0-9]+', body):
                    b.hints.append((m.attrib['name'], self.add_expr(None, body)))
        b.index = len(self.bitsets)
        self.bitsets.append(b)


def clean_display(d):
    if d is None:
        return None
    if d.text is None:
        return ''  # <display/>: prints nothing
    return ' '.join(d.text.split())


def pos_of(el):
    if 'pos' in el.attrib:
        p = int(el.attrib['pos'])
        return p, p
    return int(el.attrib['low']), int(el.attrib['high'])


# ---------------------------------------------------------------- expressions -> Rust

TOKEN_RE = re.compile(r'\s*(ISA_GPU_ID\(\)|\{[A-Za-z0-9_]+\}|0x[0-9a-fA-F]+(?:[uU]?[lL]{0,2})|[0-9]+(?:[uU]?[lL]{0,2})|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%()!~<>&|^?:])')


def tokenize(text):
    pos = 0
    out = []
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            if text[pos:].strip() == '':
                break
            raise ValueError('bad expr token at %r' % text[pos:])
        out.append(m.group(1))
        pos = m.end()
    return out


BINARY = [
    ['||'], ['&&'], ['|'], ['^'], ['&'], ['==', '!='], ['<', '<=', '>', '>='], ['<<', '>>'], ['+', '-'], ['*', '/', '%'],
]


class ExprParser:
    def __init__(self, toks):
        self.t = toks
        self.i = 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, tok=None):
        v = self.peek()
        if tok is not None and v != tok:
            raise ValueError('expected %s got %s' % (tok, v))
        self.i += 1
        return v

    def ternary(self):
        c = self.binary(0)
        if self.peek() == '?':
            self.take('?')
            a = self.ternary()
            self.take(':')
            b = self.ternary()
            return '(if %s != 0 { %s } else { %s })' % (c, a, b)
        return c

    def binary(self, level):
        if level == len(BINARY):
            return self.unary()
        lhs = self.binary(level + 1)
        while self.peek() in BINARY[level]:
            op = self.take()
            rhs = self.binary(level + 1)
            lhs = rust_bin(op, lhs, rhs)
        return lhs

    def unary(self):
        p = self.peek()
        if p == '!':
            self.take()
            return 'i64::from(%s == 0)' % self.unary()
        if p == '~':
            self.take()
            return '(!%s)' % self.unary()
        if p == '-':
            self.take()
            return '%s.wrapping_neg()' % self.unary()
        if p == '(':
            self.take('(')
            e = self.ternary()
            self.take(')')
            return '(%s)' % e
        tok = self.take()
        if tok == 'ISA_GPU_ID()':
            return 'env.gpu_id()'
        if tok.startswith('{'):
            return 'env.field("%s")?' % tok[1:-1]
        num = tok.rstrip('uUlL')
        if num.startswith('0x'):
            return '0x%x_i64' % int(num, 16)
        if num.isdigit():
            return '%d_i64' % int(num)
        raise ValueError('unexpected token %s' % tok)


def rust_bin(op, a, b):
    if op == '||':
        return 'i64::from(%s != 0 || %s != 0)' % (a, b)
    if op == '&&':
        return 'i64::from(%s != 0 && %s != 0)' % (a, b)
    if op in ('==', '!=', '<', '<=', '>', '>='):
        return 'i64::from(%s %s %s)' % (a, op, b)
    if op == '<<':
        return '%s.wrapping_shl(%s as u32)' % (a, b)
    if op == '>>':
        return '%s.wrapping_shr(%s as u32)' % (a, b)
    if op == '+':
        return '%s.wrapping_add(%s)' % (a, b)
    if op == '-':
        return '%s.wrapping_sub(%s)' % (a, b)
    if op == '*':
        return '%s.wrapping_mul(%s)' % (a, b)
    if op in ('/', '%'):
        return '%s.checked_%s(%s).ok_or(ExprError::DivByZero)?' % (a, 'div' if op == '/' else 'rem', b)
    return '(%s %s %s)' % (a, op, b)


def expr_to_rust(text):
    p = ExprParser(tokenize(text))
    e = p.ternary()
    if p.peek() is not None:
        raise ValueError('trailing tokens in %r' % text)
    return e


# ---------------------------------------------------------------- local patches


def patch(isa):
    """Forms newer than the XML snapshot (see shared/reference/ir3.md section 9).

    mova/mova1 with bit 43 (SRC_R) set print as `mova.u` / `mova1.u`; the `(r)` of the
    template is dropped (a GPR source keeps its own `(r)`).
    """
    for b in isa.bitsets:
        if b.name != '#instruction-cat1-mov':
            continue
        new_cases = []
        for c in b.cases:
            if c.display and c.expr is not None:
                for mn in ('mova1', 'mova'):
                    if ('}' + mn + ' ') in c.display:
                        src_r = isa.add_expr(None, '(%s) && {SRC_R}' % c.expr.text)
                        disp = c.display.replace(mn + ' ', mn + '.u ').replace('{SRC_R}{SRC}', '{SRC}')
                        new_cases.append(Case(src_r, disp, list(c.fields)))
                        break
            new_cases.append(c)
        b.cases = new_cases
    # a7xx: cat1 bit 42 is `(sat)` (vector `cov.s32s16 (sat)hr48.x, r48.x`, gpu 730);
    # a6xx keeps the XML's bit-42-must-be-0 pattern, so `{SAT}` never prints there.
    for b in isa.bitsets:
        if b.name == '#instruction-cat1':
            b.patterns = [(lo, hi, pat, 699 if (lo, hi) == (42, 42) else gm) for lo, hi, pat, gm in b.patterns]
            b.cases[-1].fields.append(FieldDef('SAT', 42, 42, 'bool', '(sat)'))
        if b.name == '#instruction-cat1-mov':
            for c in b.cases:
                if c.display and '{ROUND}{DST_HALF}{DST}' in c.display:
                    c.display = c.display.replace('{ROUND}{DST_HALF}{DST}', '{ROUND}{SAT}{DST_HALF}{DST}')
    # mesa's assembler sets IR3_INSTR_IMM_OFFSET exactly when an immediate offset is
    # written (vectors: `r0.y+N` has bit 23 set, `r0.w` has it clear).
    for b in isa.bitsets:
        if b.name == '#instruction-cat6-a6xx-ibo-load-store':
            b.hints.append(('HAS_OFFSET', isa.add_expr(None, '(({OFFSET_HI} << 5) | {OFFSET_LO}) != 0')))


# ---------------------------------------------------------------- flatten + emit


def kind_rust(isa, kind, names):
    if kind in ('bool',):
        return 'Kind::Bool'
    simple = {'bool_inv': 'BoolInv', 'int': 'Int', 'uint': 'Uint', 'hex': 'Hex', 'offset': 'Offset',
              'uoffset': 'Uoffset', 'branch': 'Branch', 'float': 'Float', 'assert': 'Assert'}
    if kind in simple:
        return 'Kind::' + simple[kind]
    if kind in isa.enums:
        return 'Kind::Enum(%d)' % isa.enum_order.index(kind)
    if kind in names:
        return 'Kind::Bitset(%d)' % names[kind]
    raise ValueError('unknown field type %s' % kind)


def rs_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def emit_gen(isa, w, gen, tag, extended, root):
    """Tables of the bitsets live at `gen` (indices are per generation)."""

    def live(b):
        return b.eff_gen[0] <= gen <= b.eff_gen[1]

    keep = [b for b in isa.bitsets if live(b)]
    index = {id(b): i for i, b in enumerate(keep)}
    names = {}
    for b in keep:
        names[b.name] = index[id(b)]
    roots = {}
    for b in keep:
        if id(b) in extended:
            continue
        roots.setdefault(index[id(root(b))], []).append(index[id(b)])

    def field_rs(f):
        return ('Field { name: %s, low: %d, high: %d, kind: %s, display: %s, expr: %s, params: &[%s], assert_val: %d }' % (
            rs_str(f.name), f.low, f.high, kind_rust(isa, f.kind, names),
            'Some(%s)' % rs_str(f.display) if f.display is not None else 'None',
            'Some(%d)' % f.expr.index if f.expr is not None else 'None',
            ', '.join('(%s, %s)' % (rs_str(a), rs_str(b)) for a, b in f.params),
            f.assert_val or 0))

    w('// ------------------------------------------------------------ gen %d' % gen)
    w('')
    w('static BITSETS_%s: &[Bitset] = &[' % tag)
    for i, b in enumerate(keep):
        w('    // %d' % i)
        w('    Bitset {')
        w('        name: %s,' % rs_str(b.name))
        w('        size: %d,' % b.size_eff)
        w('        parent: %s,' % ('Some(%d)' % index[id(b.parent)] if b.parent is not None else 'None'))
        mask, match, dc = b.masks[gen]
        w('        mask: 0x%x,' % mask)
        w('        match_bits: 0x%x,' % match)
        w('        dontcare: 0x%x,' % dc)
        w('        cases: &[')
        for c in b.cases:
            w('            Case {')
            w('                expr: %s,' % ('Some(%d)' % c.expr.index if c.expr is not None else 'None'))
            w('                display: %s,' % ('Some(%s)' % rs_str(c.display) if c.display is not None else 'None'))
            w('                fields: &[')
            for f in c.fields:
                w('                    %s,' % field_rs(f))
            w('                ],')
            w('            },')
        w('        ],')
        w('    },')
    w('];')
    w('')
    w('pub(crate) static ISA_%s: Isa = Isa {' % tag)
    w('    gpu_id: %d,' % gen)
    w('    bitsets: BITSETS_%s,' % tag)
    w('    // leaves per root bitset (indices into bitsets)')
    w('    root_leaves: &[')
    for r in sorted(roots):
        w('        (%d, &[%s]),' % (r, ', '.join(str(x) for x in roots[r])))
    w('    ],')
    w('    // encoder defaults for fields the text does not show: (bitset, field, expression)')
    w('    encode_hints: &[')
    for b in keep:
        for fname, e in b.hints:
            w('        (%d, %s, %d),' % (index[id(b)], rs_str(fname), e.index))
    w('    ],')
    w('    instruction_root: %d,' % names['#instruction'])
    w('};')
    w('')
    ninsn = len(roots.get(names['#instruction'], []))
    print('gen %d: bitsets kept: %d, instruction leaves: %d' % (gen, len(keep), ninsn), file=sys.stderr)


def main():
    src, out = sys.argv[1], sys.argv[2]
    isa = Isa()
    isa.parse_file(os.path.join(src, 'ir3.xml'))
    def resolve(e):
        return isa.expr_by_name[e.name] if isinstance(e, ExprRef) else e

    for b in isa.bitsets:
        for c in b.cases:
            c.expr = resolve(c.expr)
            for f in c.fields:
                f.expr = resolve(f.expr)
    patch(isa)

    # Resolve parents: the most recent definition of a name that precedes the child in
    # the file (mesa re-defines names per generation, e.g. ldg.a).
    all_by_name = {}
    for b in isa.bitsets:
        all_by_name.setdefault(b.name, []).append(b)
    for b in isa.bitsets:
        if b.extends is not None:
            cands = all_by_name[b.extends]
            before = [c for c in cands if c.index < b.index]
            b.parent = before[-1] if before else cands[0]
    # Parents referenced by children; leaf = never extended.
    extended = set(id(b.parent) for b in isa.bitsets if b.parent is not None)

    def chain(b):
        while b is not None:
            yield b
            b = b.parent

    def root(b):
        r = b
        while r.parent is not None:
            r = r.parent
        return r

    for b in isa.bitsets:
        gmin, gmax = 0, (1 << 32) - 1
        for a in chain(b):
            gmin = max(gmin, a.gen_min)
            gmax = min(gmax, a.gen_max)
        b.eff_gen = (gmin, gmax)
        b.masks = {}
        for gen, _ in GENS:
            mask = match = dc = 0
            seen = 0
            for a in chain(b):  # child patterns take precedence
                for low, high, pat, pat_gen_max in a.patterns:
                    if pat_gen_max is not None and gen > pat_gen_max:
                        continue
                    width = high - low + 1
                    assert len(pat) == width, (b.name, pat)
                    for i, ch in enumerate(reversed(pat)):
                        bit = 1 << (low + i)
                        if seen & bit:
                            continue
                        seen |= bit
                        if ch == '1':
                            mask |= bit
                            match |= bit
                        elif ch == '0':
                            mask |= bit
                        else:
                            dc |= bit
            b.masks[gen] = (mask, match, dc)
        b.size_eff = next(a.size for a in chain(b) if a.size is not None)

    lines = []
    w = lines.append
    w('// @generated by frontend/gen/ir3/gen_tables.py from mesa isaspec ir3 XML.')
    w('// Do not edit by hand; re-run the generator instead.')
    w('')
    w('use super::spec::{Bitset, Case, EnumDef, ExprEnv, ExprError, Field, Isa, Kind};')
    w('')
    w('pub(crate) static ENUMS: &[EnumDef] = &[')
    for en in isa.enum_order:
        vals = ', '.join('(%d, %s)' % (v, rs_str(d)) for v, d in isa.enums[en])
        w('    EnumDef { name: %s, values: &[%s] },' % (rs_str(en), vals))
    w('];')
    w('')
    for gen, tag in GENS:
        emit_gen(isa, w, gen, tag, extended, root)
    w('/// (bitset, field): fields that hold a destination although not named DST*.')
    w('pub(crate) static DST_FIELDS: &[(&str, &str)] = &[')
    for b in isa.bitsets:
        for f in b.dst_fields:
            w('    (%s, %s),' % (rs_str(b.name), rs_str(f)))
    w('];')
    w('')
    w('/// a8xx: the XML has no gen-800 specific encodings; same tables, gpu_id 800.')
    w('pub(crate) static ISA_800: Isa = Isa { gpu_id: 800, ..ISA_700 };')
    w('')
    # Every field name, as a typed constant for Instr::get / Instr::field.
    names = sorted(set(f.name for b in isa.bitsets for c in b.cases for f in c.fields if f.name))
    w('/// Every field name of the isaspec (encoded and derived), for')
    w('/// [`Instr::get`](super::Instr::get): a misspelt field does not compile.')
    w('/// Names that start with a digit get a leading `_` (`_3D` is `3D`).')
    w('pub mod field {')
    w('    use super::super::instr::FieldName;')
    for n in names:
        ident = ('_' + n) if n[0].isdigit() else n
        assert re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', ident), n
        w('    pub const %s: FieldName = FieldName(%s);' % (ident, rs_str(n)))
    w('}')
    w('')
    w('/// Field names each expression reads (the assembler solves for their bits).')
    w('pub(crate) static EXPR_FIELDS: &[&[&str]] = &[')
    for e in isa.exprs:
        refs = sorted(set(re.findall(r'\{([A-Za-z0-9_]+)\}', e.text)))
        w('    &[%s],' % ', '.join(rs_str(r) for r in refs))
    w('];')
    w('')
    w('/// Evaluate expression `id` with C semantics on i64 (booleans are 0/1).')
    w('#[allow(clippy::all, unused_parens)]')
    w('pub(crate) fn eval_expr(id: u16, env: &mut dyn ExprEnv) -> Result<i64, ExprError> {')
    w('    Ok(match id {')
    for e in isa.exprs:
        w('        // %s' % e.text)
        w('        %d => %s,' % (e.index, expr_to_rust(e.text)))
    w('        _ => return Err(ExprError::UnknownExpr(id)),')
    w('    })')
    w('}')
    with open(out, 'w') as fh:
        fh.write('\n'.join(lines) + '\n')
    print('exprs: %d' % len(isa.exprs), file=sys.stderr)


if __name__ == '__main__':
    main()
