#!/usr/bin/env python3
"""Generate frontend/src/agx/tables.rs from Mesa's AGX2.xml.

Usage (from the repository root):
    python3 frontend/gen/agx/gen_tables.py ../shared/spec/agx/AGX2.xml \
        frontend/gen/agx/overlay.xml > frontend/src/agx/tables.rs
    rustfmt --edition 2024 frontend/src/agx/tables.rs

overlay.xml holds local corrections in the same syntax (see its header comment):
`<encoding>` elements are added (or replace one of the same name), `<ins mode="replace">`
replaces the instruction of the same name in place, `<ins mode="before:NAME">` inserts a
new one before NAME, `<enum kind="K" mode="extend">` appends values to an enum, and
`<dontcare ins="A B" bit="..."/>` makes bits of the named instructions ignored (neither
matched nor rejected as unknown).

The XML is the single source of truth for bit positions: every field position in the
Rust decoder/printer/assembler comes from the tables written here. The build never reads
the XML; the generated file is committed together with this script.

Semantics reproduced from the XML format (facts, re-implemented here):
- `bit="a:b c"` lists ranges, low bits first; negative positions count back from the end
  of the long form of the instruction (Python modulo on the long length in bits).
- `<exact>` bitstrings are written most significant bit first; `<zero>` forces zeros.
- `<group>` children `<ins>` substitute attribute values (e.g. opcode="0101") into the
  group's `<exact>` text and inherit all other group children.
- instructions with two lengths and no explicit `length` modifier use bit 15.
- an encoding's top-level children apply to every `<case>`; case properties override.
"""
import sys
import xml.etree.ElementTree as ET

ENC_MODS = {"cache": "Cache", "size32": "Size32", "size64": "Size64", "hint": "Hint",
            "abs": "Abs", "neg": "Neg", "sx": "Sx", "zx": "Zx", "mask": "Mask",
            "count": "Count", "lu": "Lu"}
CASE_KINDS = {"imm": "Imm", "fimm": "FImm", "uniform": "Uniform", "reg": "Reg",
              "cf": "Cf", "ts": "Ts", "ss": "Ss"}


def die(msg):
    sys.stderr.write("gen_tables: " + msg + "\n")
    sys.exit(1)


def camel(name):
    out = "".join(p[:1].upper() + p[1:] for p in name.replace("-", "_").split("_") if p)
    if not out or not out[0].isalpha():
        out = "N" + out
    return out


def parse_ranges(spec, length_bits=None):
    """Return [(start, size)] in field order (low bits first)."""
    ranges = []
    for part in spec.split():
        if ":" in part:
            a, b = (int(x) for x in part.split(":"))
        else:
            a = b = int(part)
        if a < 0 or b < 0:
            if length_bits is None:
                die("negative bit range %r without a length" % spec)
            a %= length_bits
            b %= length_bits
        if a > b:
            die("bad range %r" % spec)
        ranges.append((a, b - a + 1))
    return ranges


def ranges_mask(ranges):
    m = 0
    for start, size in ranges:
        rm = ((1 << size) - 1) << start
        if m & rm:
            die("overlapping ranges %r" % ranges)
        m |= rm
    return m


def exact_of(el, subst):
    """(mask, value) for an <exact>/<zero> element."""
    ranges = parse_ranges(el.attrib["bit"])
    mask = ranges_mask(ranges)
    if el.tag == "zero":
        return mask, 0
    text = (el.text or "").strip()
    text = subst.get(text, text)
    if len(text) != bin(mask).count("1") or any(c not in "01" for c in text):
        die("exact text %r does not fit bits %r" % (text, el.attrib["bit"]))
    # MSB-first bitstring; deposit its bits into the mask positions low to high.
    bits = text[::-1]
    value, i = 0, 0
    for pos in range(128):
        if mask >> pos & 1:
            if bits[i] == "1":
                value |= 1 << pos
            i += 1
    return mask, value


class Case:
    def __init__(self, el):
        self.mask = 0
        self.value = 0
        self.kind = None  # (name, ranges, shift, signed)
        self.mods = []  # (name, ranges)
        self.props = {}
        for ch in el:
            if ch.tag in ("exact", "zero"):
                m, v = exact_of(ch, {})
                self.mask |= m
                self.value |= v
            elif ch.tag == "immediate":
                if self.kind is not None:
                    die("two immediates in one case")
                name = ch.attrib["name"]
                if name not in CASE_KINDS:
                    die("unknown operand kind " + name)
                self.kind = (name, parse_ranges(ch.attrib["bit"]), int(ch.get("shift", "0")),
                             ch.get("kind") == "signed")
            elif ch.tag == "modifier":
                name = ch.attrib["name"]
                if name not in ENC_MODS:
                    die("unknown encoding modifier " + name)
                self.mods.append((name, parse_ranges(ch.attrib["bit"])))
            elif ch.tag == "property":
                self.props[ch.attrib["name"]] = int((ch.text or "1").strip())
            elif ch.tag == "case":
                pass
            else:
                die("unknown encoding child " + ch.tag)


def parse_encoding(el):
    base = Case(el)
    cases = [Case(ch) for ch in el if ch.tag == "case"]
    if not cases:
        return [base]
    for c in cases:
        c.mask |= base.mask
        c.value |= base.value
        c.mods = base.mods + c.mods
        c.props.update(base.props)
        if base.kind is not None:
            if c.kind is not None:
                die("kind in both base and case")
            c.kind = base.kind
    return cases


class Instr:
    def __init__(self, el, name, display, subst, defs):
        self.name = name
        self.display = display or name
        self.lengths = [int(x) for x in el.attrib["length"].split("/")]
        long_bits = self.lengths[-1] * 8
        self.mask = 0
        self.value = 0
        self.dontcare = 0  # bits the hardware ignores (overlay <dontcare>)
        self.dests, self.srcs, self.imms, self.mods = [], [], [], []
        for ch in el:
            tag = ch.tag
            if tag in ("exact", "zero"):
                m, v = exact_of(ch, subst)
                self.mask |= m
                self.value |= v
            elif tag == "immediate":
                self.imms.append((ch.attrib["name"], parse_ranges(ch.attrib["bit"]),
                                  ch.get("kind") == "signed"))
            elif tag in ("src", "dest"):
                op = (ch.attrib["kind"], parse_ranges(ch.attrib["bit"], long_bits))
                (self.dests if tag == "dest" else self.srcs).append(op)
            elif tag == "modifier":
                self.mods.append(modifier_of(ch))
            elif tag in defs:
                what, payload = defs[tag]
                if what == "dest":
                    self.dests.append((payload[0], parse_ranges(payload[1], long_bits)))
                elif what == "src":
                    self.srcs.append((payload[0], parse_ranges(payload[1], long_bits)))
                else:
                    self.mods.append(payload)
            elif tag == "ins":
                pass
            else:
                die("unknown instruction child %s in %s" % (tag, name))
        if len(self.lengths) > 1 and not any(m[0] == "length" for m in self.mods):
            self.mods.append(defs["length"][1])
        self.length_bit = 0
        for m in self.mods:
            if m[0] == "length":
                self.length_bit = m[3][0][0]

    def known(self):
        k = self.mask | self.dontcare
        for _, r in self.dests + self.srcs:
            k |= ranges_mask(r)
        for _, r, _ in self.imms:
            k |= ranges_mask(r)
        for m in self.mods:
            k |= ranges_mask(m[3])
        return k


def modifier_of(el, name=None):
    name = name or el.attrib["name"]
    return (name, el.get("display", name), el.get("kind", "int"), parse_ranges(el.attrib["bit"]))


def main():
    if len(sys.argv) != 3:
        die("usage: gen_tables.py AGX2.xml overlay.xml")
    root = ET.parse(sys.argv[1]).getroot()
    overlay = ET.parse(sys.argv[2]).getroot()
    defs, encodings, enums, instrs = {}, {}, {}, []
    for ch in root:
        if ch.tag == "define":
            if "src" in ch.attrib:
                defs[ch.attrib["src"]] = ("src", (ch.attrib["kind"], ch.attrib["bit"]))
            elif "dest" in ch.attrib:
                defs[ch.attrib["dest"]] = ("dest", (ch.attrib["kind"], ch.attrib["bit"]))
            elif "modifier" in ch.attrib:
                defs[ch.attrib["modifier"]] = ("mod", modifier_of(ch, ch.attrib["modifier"]))
            else:
                die("unknown define")
        elif ch.tag == "encoding":
            encodings[ch.attrib["name"]] = parse_encoding(ch)
        elif ch.tag == "enum":
            vals = []
            for v in ch:
                text = (v.text or "").strip()
                default = v.get("default") == "true"
                vals.append((int(v.attrib["value"]), text, default))
            enums[ch.attrib["kind"]] = (ch.attrib["name"], vals)
        elif ch.tag == "ins":
            instrs.append(Instr(ch, ch.attrib["name"], ch.get("display"), {}, defs))
        elif ch.tag == "group":
            members = [c for c in ch if c.tag == "ins"]
            if not members:
                die("empty group")
            for c in members:
                instrs.append(Instr(ch, c.attrib["name"], c.get("display"), dict(c.attrib), defs))
        else:
            die("unknown top-level element " + ch.tag)

    for ch in overlay:
        if ch.tag == "encoding":
            encodings[ch.attrib["name"]] = parse_encoding(ch)
        elif ch.tag == "enum" and ch.get("mode") == "extend":
            name, vals = enums[ch.attrib["kind"]]
            for v in ch:
                vals.append((int(v.attrib["value"]), (v.text or "").strip(), False))
    for ch in overlay:
        if ch.tag != "ins":
            continue
        new = Instr(ch, ch.attrib["name"], ch.get("display"), {}, defs)
        mode = ch.get("mode", "")
        names = [i.name for i in instrs]
        if mode == "replace":
            if new.name not in names:
                die("overlay replaces unknown " + new.name)
            instrs[names.index(new.name)] = new
        elif mode.startswith("before:"):
            target = mode[len("before:"):]
            if target not in names or new.name in names:
                die("bad overlay insertion " + new.name)
            instrs.insert(names.index(target), new)
        else:
            die("overlay ins needs mode")

    names = [i.name for i in instrs]
    for ch in overlay:
        if ch.tag != "dontcare":
            continue
        m = ranges_mask(parse_ranges(ch.attrib["bit"]))
        for n in ch.attrib["ins"].split():
            if n not in names:
                die("dontcare names unknown instruction " + n)
            i = instrs[names.index(n)]
            i.mask &= ~m
            i.value &= ~m
            i.dontcare |= m
    if len(set(names)) != len(names):
        die("duplicate instruction names")
    for i in instrs:
        for kind, _ in i.dests + i.srcs:
            if kind not in encodings:
                die("unknown operand encoding %s in %s" % (kind, i.name))

    enc_names = list(encodings)
    enum_names = list(enums)
    mod_fields = sorted({m[0] for i in instrs for m in i.mods})
    imm_fields = sorted({im[0] for i in instrs for im in i.imms})

    out = []
    w = out.append
    w("// @generated by frontend/gen/agx/gen_tables.py from Mesa src/asahi/isa/AGX2.xml")
    w("// plus frontend/gen/agx/overlay.xml.")
    w("// Do not edit by hand: rerun the generator (see its docstring).")
    w("")
    w("use super::spec::{CaseKind, CaseSpec, EncMod, EncodingSpec, EnumSpec, ImmSpec,")
    w("    InstrSpec, ModKind, ModSpec, OperandKind, OperandSpec};")
    w("")

    def rng(r):
        return "&[" + ", ".join("(%d, %d)" % x for x in r) + "]"

    def enum_decl(doc, name, variants, extra_doc=None):
        w("/// " + doc)
        w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
        w("pub enum %s {" % name)
        for v, d in variants:
            if d:
                w("    /// %s" % d)
            w("    %s," % v)
        w("}")
        w("")

    def layout(i):
        parts = ["`%s` (prints as `%s`, %s bytes)" % (i.name, i.display, "/".join(map(str, i.lengths)))]
        if i.dests:
            parts.append("dests: " + ", ".join(k for k, _ in i.dests))
        if i.srcs:
            parts.append("srcs: " + ", ".join(k for k, _ in i.srcs))
        if i.imms:
            parts.append("imms: " + ", ".join(n for n, _, _ in i.imms))
        mods = [m[0] for m in i.mods if m[0] != "length"]
        if mods:
            parts.append("mods: " + ", ".join(mods))
        return "; ".join(parts)

    enum_decl("AGX2.xml instruction (one per `<ins>`, in the XML's match order). Each doc\n"
              "/// line lists the operand encodings and fields in `Instr` order.", "Opcode",
              [(camel(i.name), layout(i)) for i in instrs])
    enum_decl("Instruction-level modifier fields of AGX2.xml.", "ModField",
              [(camel(m), "`%s`" % m) for m in mod_fields])
    enum_decl("Instruction-level immediate fields of AGX2.xml.", "ImmField",
              [(camel(m), "`%s`" % m) for m in imm_fields])
    enum_decl("AGX2.xml operand encodings (how an operand field's bits are read).", "Encoding",
              [(camel(e), "`%s`" % e) for e in enc_names])
    enum_decl("AGX2.xml enumerations used by modifiers.", "EnumKind",
              [(camel(e), "`%s`: %s" % (e, enums[e][0])) for e in enum_names])

    def name_fn(ty, items, fn="name"):
        w("impl %s {" % ty)
        w("    /// The AGX2.xml name.")
        w("    pub fn %s(self) -> &'static str {" % fn)
        w("        match self {")
        for v, s in items:
            w('            %s::%s => "%s",' % (ty, v, s))
        w("        }")
        w("    }")
        w("}")
        w("")

    name_fn("Opcode", [(camel(i.name), i.name) for i in instrs])
    w("impl Opcode {")
    w("    /// Every opcode, in match order.")
    w("    pub const ALL: [Opcode; %d] = [%s];" % (len(instrs), ", ".join("Opcode::" + camel(i.name) for i in instrs)))
    w("}")
    w("")
    name_fn("ModField", [(camel(m), m) for m in mod_fields])
    name_fn("ImmField", [(camel(m), m) for m in imm_fields])
    name_fn("Encoding", [(camel(e), e) for e in enc_names])
    name_fn("EnumKind", [(camel(e), e) for e in enum_names])

    w("/// Operand encodings, indexed by `Encoding as usize`.")
    w("pub(crate) static ENCODINGS: [EncodingSpec; %d] = [" % len(enc_names))
    for e in enc_names:
        w("    EncodingSpec { encoding: Encoding::%s, cases: &[" % camel(e))
        for c in encodings[e]:
            if c.mask >= 1 << 32 or c.value >= 1 << 32:
                die("case exact too wide")
            if c.kind is None:
                kind = "None"
            else:
                kn, kr, ks, sg = c.kind
                kind = "Some(CaseKind { kind: OperandKind::%s, bits: %s, shift: %d, signed: %s })" % (
                    CASE_KINDS[kn], rng(kr), ks, "true" if sg else "false")
            mods = ", ".join("(EncMod::%s, %s)" % (ENC_MODS[n], rng(r)) for n, r in c.mods)
            for p in c.props:
                if p not in ("size16", "size32", "size64", "count"):
                    die("unknown property " + p)
            w("        CaseSpec { exact_mask: %#x, exact_value: %#x, kind: %s, mods: &[%s], "
              "size16: %s, size32: %s, size64: %s, count: %d }," % (
                  c.mask, c.value, kind, mods,
                  "true" if c.props.get("size16") else "false",
                  "true" if c.props.get("size32") else "false",
                  "true" if c.props.get("size64") else "false",
                  c.props.get("count", 0)))
        w("    ]},")
    w("];")
    w("")

    w("/// Enumerations, indexed by `EnumKind as usize`: (value, display); display `None` is")
    w("/// the default value, which prints nothing.")
    w("pub(crate) static ENUMS: [EnumSpec; %d] = [" % len(enum_names))
    for e in enum_names:
        vals = []
        for v, text, default in enums[e][1]:
            disp = "None" if default or not text else 'Some("%s")' % text
            vals.append("(%d, %s)" % (v, disp))
        w("    EnumSpec { kind: EnumKind::%s, values: &[%s] }," % (camel(e), ", ".join(vals)))
    w("];")
    w("")

    w("/// Instruction specifications in match order, indexed by `Opcode as usize`.")
    w("pub(crate) static INSTRS: [InstrSpec; %d] = [" % len(instrs))
    for i in instrs:
        ops = lambda lst: "&[" + ", ".join(
            "OperandSpec { encoding: Encoding::%s, bits: %s }" % (camel(k), rng(r)) for k, r in lst) + "]"
        imms = "&[" + ", ".join("ImmSpec { field: ImmField::%s, bits: %s, signed: %s }" % (
            camel(n), rng(r), "true" if s else "false") for n, r, s in i.imms) + "]"
        mods = []
        for n, disp, kind, r in i.mods:
            if kind in enums:
                mk = "ModKind::Enum(EnumKind::%s)" % camel(kind)
            elif n == "length":
                mk = "ModKind::Length"
            else:
                mk = 'ModKind::Flag("%s")' % disp
            mods.append("ModSpec { field: ModField::%s, kind: %s, bits: %s }" % (camel(n), mk, rng(r)))
        w("    InstrSpec {")
        w("        opcode: Opcode::%s," % camel(i.name))
        w('        display: "%s",' % i.display)
        w("        length_bit: %d, short_len: %d, long_len: %d," % (i.length_bit, i.lengths[0], i.lengths[-1]))
        w("        exact_mask: %#x, exact_value: %#x, known: %#x," % (i.mask, i.value, i.known()))
        w("        dests: %s," % ops(i.dests))
        w("        srcs: %s," % ops(i.srcs))
        w("        imms: %s," % imms)
        w("        mods: &[%s]," % ", ".join(mods))
        w("    },")
    w("];")
    print("\n".join(out))


if __name__ == "__main__":
    main()
