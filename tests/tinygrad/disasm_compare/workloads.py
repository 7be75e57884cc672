"""tinygrad workloads whose a630 kernels are disassembled by compare.py.

Every workload builds tensors on the NULL device (compile only; inputs come from
Tensor.empty, so no copies and no device) and realizes its outputs, which makes
tinygrad compile each kernel once through IR3Compiler. The set aims at breadth of
instruction forms: every dtype tinygrad renders for IR3, integer/float ALU, casts,
native and software transcendentals, reductions with locals, matmul/conv shapes,
index-heavy ops, and the image (isam/stib) paths.

A workload is `(name, fn, context)`; `context` holds tinygrad ContextVars to set
while it runs (e.g. TRANSCENDENTAL=2, NOOPT=1).
"""

import random as pyrandom

from tinygrad import Tensor, dtypes

NAMES = ["float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]
ALL = [getattr(dtypes, n) for n in NAMES]


def e(*shape, dtype=dtypes.float32):
  return Tensor.empty(*shape, dtype=dtype)


def realize(*ts):
  Tensor.realize(*ts)


def elementwise(dt):
  def run():
    a, b = e(67, dtype=dt), e(67, dtype=dt)
    if dt == dtypes.bool:
      realize(a & b, a | b, a ^ b, a.logical_not(), (a == b), a.where(b, a), a.cast(dtypes.int32) + 1)
      return
    outs = [a + b, a * b, a.maximum(b), a.minimum(b), a < b, a == b, a != b, (a < b).where(a, b), a + 3, a * 5]
    if dt not in (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64):
      outs += [-a, a.abs()]
    outs += [a - b]
    if dtypes.is_int(dt):
      outs += [a // b, a % b, a & b, a | b, a ^ b, a << 3, a >> 2, a // 7, a % 10, a * 1000003, a.bitwise_not()]
    else:
      outs += [a / b, a.sqrt(), a.reciprocal(), a.trunc(), a.floor(), a.ceil(), a.round(), a.sign(), a.square(), a.clip(-1, 1)]
    realize(*outs)
  return run


def transcendental():
  a, b = e(129), e(129)
  h = e(129, dtype=dtypes.float16)
  realize(a.exp(), a.log(), a.sin(), a.cos(), a.tan(), a.exp2(), a.log2(), a.pow(b), a.pow(2.5), a.rsqrt(),
          a.sigmoid(), a.tanh(), a.gelu(), a.erf(), a.softplus(), a.mish(), a.atan(),
          h.exp(), h.log(), h.sin(), h.sqrt(), h.pow(h))


def casts():
  srcs = {dt: e(33, dtype=dt) for dt in ALL}
  realize(*[src.cast(dst) for sdt, src in srcs.items() for dst in ALL if dst != sdt])
  realize(*[srcs[dtypes.float32].bitcast(dt) for dt in (dtypes.int32, dtypes.uint32)],
          srcs[dtypes.float16].bitcast(dtypes.int16), srcs[dtypes.int64].bitcast(dtypes.uint64))


def reductions():
  x, h, i = e(37, 53), e(64, 129, dtype=dtypes.float16), e(211, 7, dtype=dtypes.int32)
  realize(x.sum(), x.sum(0), x.sum(1), x.max(1), x.min(0), x.mean(1), x.prod(1), x.std(1), x.var(0))
  realize(h.sum(1), h.max(0), i.sum(0), i.max(1), e(4096).sum(), e(100000).max(), e(5, 8, dtype=dtypes.int64).sum(1))
  realize(e(17, 33, dtype=dtypes.uint8).sum(1), e(9, 10, dtype=dtypes.bool).any(1), e(9, 10, dtype=dtypes.bool).all(0))


def matmul():
  realize(e(64, 64) @ e(64, 64), e(1, 256) @ e(256, 128), e(33, 17) @ e(17, 65), e(8, 3, 16, 32) @ e(8, 3, 32, 8))
  realize(e(64, 64, dtype=dtypes.float16) @ e(64, 64, dtype=dtypes.float16), e(32, 32, dtype=dtypes.int32) @ e(32, 32, dtype=dtypes.int32))
  realize((e(16, 128, dtype=dtypes.float16).matmul(e(128, 16, dtype=dtypes.float16), dtype=dtypes.float32)).relu())


def conv():
  x = e(2, 3, 17, 19)
  realize(x.conv2d(e(8, 3, 3, 3)), x.conv2d(e(6, 1, 3, 3), groups=3, padding=1), x.conv2d(e(4, 3, 5, 5), stride=2, dilation=2),
          x.conv2d(e(4, 3, 1, 1), e(4)).relu(), x.max_pool2d(), x.avg_pool2d(), e(1, 8, 9, 9, dtype=dtypes.float16).conv2d(
            e(8, 8, 3, 3, dtype=dtypes.float16), padding=1), e(2, 4, 30).conv2d(e(5, 4, 3)), x.interpolate((9, 11)))


def indexing():
  x, idx = e(50, 20), Tensor.empty(30, dtype=dtypes.int32)
  realize(x.argmax(1), x.argmin(0), e(97, dtype=dtypes.int32).argmax(), x.cumsum(1), e(300).cumsum(), e(40, dtype=dtypes.int32).cumsum())
  realize(x.gather(1, Tensor.empty(50, 4, dtype=dtypes.int32)), x[idx], x[:, 3:17:2], x.flip(0), x.pad(((1, 2), (3, 0)), value=1.5),
          x.repeat(2, 1), x.T.contiguous(), Tensor.cat(x, x, dim=1), x.shrink(((5, 9), None)).expand(3, 4, 20))
  realize(Tensor.arange(100), Tensor.eye(9), idx.one_hot(12), Tensor.empty(40, 10, dtype=dtypes.int32).one_hot(5).sum(0))
  realize(x.cummax(1)[0], x.sort(1)[0], x.topk(3, 1)[1])


def nn():
  x = e(16, 100)
  realize(x.softmax(1), x.log_softmax(0), x.layernorm(), x.relu(), x.leaky_relu(), x.elu(), x.swish(), x.hardswish(),
          x.sparse_categorical_crossentropy(Tensor.empty(16, dtype=dtypes.int32)), e(4, 8, 16, 16).batchnorm(None, None, e(8), e(8)))
  realize(e(2, 4, 16, 32).scaled_dot_product_attention(e(2, 4, 16, 32), e(2, 4, 16, 32), is_causal=True))


def random():
  Tensor.manual_seed(1)
  realize(Tensor.rand(300), Tensor.randn(5, 7), Tensor.randint(50, low=0, high=9), Tensor.rand(20, dtype=dtypes.float16),
          Tensor.uniform(10, low=-2, high=3), Tensor.empty(100).multinomial(3, replacement=True))


def int64_ops():
  a, b = e(45, dtype=dtypes.int64), e(45, dtype=dtypes.uint64)
  realize(a * b.cast(dtypes.int64), a.cast(dtypes.float32), b >> 33, a << 40, a // 1000000007, b % 3, a.maximum(0), a.sum(), b.max())


def image_ops():
  x = e(1, 16, 14, 14)
  realize(x.conv2d(e(32, 16, 3, 3), padding=1).relu(), x.conv2d(e(16, 1, 3, 3), groups=16), x.conv2d(e(8, 16, 1, 1), e(8)),
          e(1, 3, 20, 20).conv2d(e(8, 3, 3, 3), stride=2), e(8, 64).dot(e(64, 32)), e(4, 48).dot(e(48, 16)).relu())


def image_half():
  realize(e(1, 8, 12, 12, dtype=dtypes.float16).conv2d(e(16, 8, 3, 3, dtype=dtypes.float16), padding=1),
          e(4, 32, dtype=dtypes.float16).dot(e(32, 32, dtype=dtypes.float16)))


def fast_idiv():
  a, b = e(1000, dtype=dtypes.int32), e(1000, dtype=dtypes.uint32)
  realize(a // 7, a % 13, b // 1000, b % 97, a // -3, (a * b.cast(dtypes.int32)) // 12345)


def half_math():
  a, b = e(100, dtype=dtypes.float16), e(100, dtype=dtypes.float16)
  realize(a < b, (a < b).where(a, b), a.cos(), a.tan(), a.exp2(), a.log2(), a.reciprocal(), a.rsqrt(), a.cast(dtypes.int8), a.sum(),
          a.max(), a.abs() + b, a.maximum(b), a.trunc(), a.floor(), (a * b + a).relu())


def misc():
  x = e(16, 33)
  realize(x.pad(((2, 2), (3, 3)), mode="reflect"), x.cos(), x.asin(), x.isnan(), x.isinf(), x.lerp(x, 0.3), x.logsumexp(1),
          x.cumprod(1), x.masked_fill(x > 0, 2.0), x.relu6(), x.hardtanh(), x.tril(), x.triu(), x.roll(3, 1))


def mnist():
  x = e(4, 1, 28, 28)
  y = x.conv2d(e(32, 1, 5, 5)).relu().conv2d(e(32, 32, 5, 5)).relu().max_pool2d()
  y = y.conv2d(e(64, 32, 3, 3)).relu().max_pool2d().flatten(1)
  realize((y @ e(1024, 10)).log_softmax())


def big_matmul():
  realize(e(512, 512) @ e(512, 512), e(256, 256, dtype=dtypes.float16) @ e(256, 256, dtype=dtypes.float16),
          e(128, 128, dtype=dtypes.int8).matmul(e(128, 128, dtype=dtypes.int8), dtype=dtypes.int32))


UNARY = ["exp", "log", "sin", "cos", "tan", "sqrt", "rsqrt", "reciprocal", "exp2", "log2", "sigmoid", "tanh", "gelu", "erf", "softplus",
         "relu", "abs", "neg", "sign", "trunc", "floor", "ceil", "round", "square", "atan", "asin", "acos", "sinh", "cosh", "asinh",
         "acosh", "atanh", "isnan", "isinf", "quick_gelu", "hardsigmoid", "selu", "celu", "softsign", "logsigmoid"]


def unary_all(dt):
  def run():
    a = e(4, 64, dtype=dt)
    realize(*[getattr(a, name)() for name in UNARY])
  return run


def conv_shapes():
  # (cin, cout, kernel, stride, padding, groups); the 7x7 stride-3 one spills to private memory (ldp/stp).
  for cin, cout, ks, st, pad, gr in [(1, 1, 1, 1, 0, 1), (16, 16, 3, 1, 1, 16), (8, 4, 7, 3, 2, 1), (4, 8, 2, 2, 0, 2)]:
    realize(e(1, cin, 23, 21).conv2d(e(cout, cin // gr, ks, ks), stride=st, padding=pad, groups=gr))
  realize(e(1, 8, 16, 16).conv_transpose2d(e(8, 4, 3, 3), stride=2))


def where_all_dtypes():
  for dt in ALL:
    c, a, b = e(50, dtype=dtypes.bool), e(50, dtype=dt), e(50, dtype=dt)
    realize(c.where(a, b), c.where(a, 1), a.max(), a.sum(), a.cumsum())


EXPR_DTYPES = [dtypes.float32, dtypes.float16, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
               dtypes.int64, dtypes.bool]


def random_expr(rng, leaves, depth):
  """A random elementwise/reduce expression over `leaves` (mixed dtypes, constants, casts)."""
  if depth == 0 or rng.random() < 0.2:
    return rng.choice(leaves)
  a, b = random_expr(rng, leaves, depth - 1), random_expr(rng, leaves, depth - 1)
  op = rng.choice(["add", "mul", "sub", "max", "where", "lt", "cast", "div", "const", "reduce"])
  if a.dtype == dtypes.bool and op in ("sub", "div", "const", "reduce"):
    return a ^ b.cast(dtypes.bool)
  if op == "add": return a + b
  if op == "mul": return a * b
  if op == "sub": return a - b
  if op == "max": return a.maximum(b)
  if op == "where": return (a < b).where(a, b)
  if op == "lt": return a < b
  if op == "cast": return a.cast(rng.choice(EXPR_DTYPES))
  if op == "div": return a / (b.abs() + 1) if dtypes.is_float(a.dtype) else a // (b.cast(a.dtype) | 1)
  if op == "const": return a + rng.choice([1, -3, 255, 70000, 0.5, 1e-3])
  return a.sum(rng.choice([0, 1]), keepdim=True).expand(a.shape)


def random_exprs(seed):
  def run():
    rng = pyrandom.Random(seed)
    shape = (rng.choice([3, 16, 33]), rng.choice([1, 7, 64]))
    leaves = [e(*shape, dtype=rng.choice(EXPR_DTYPES)) for _ in range(3)]
    for _ in range(4):
      # tinygrad rejects some random graphs (e.g. dtype rules); those are skipped, never a compiled kernel.
      try:
        random_expr(rng, leaves, 4).contiguous().realize()
      except (RuntimeError, AssertionError, TypeError, ValueError):
        pass
  return run


PLAIN = [(f"elementwise_{n}", elementwise(getattr(dtypes, n)), {}) for n in NAMES] + [
  ("transcendental", transcendental, {}),
  ("transcendental_sw", transcendental, {"TRANSCENDENTAL": 2}),
  ("casts", casts, {}),
  ("reductions", reductions, {}),
  ("reductions_noopt", reductions, {"NOOPT": 1}),
  ("matmul", matmul, {}),
  ("matmul_noopt", matmul, {"NOOPT": 1}),
  ("conv", conv, {}),
  ("indexing", indexing, {}),
  ("nn", nn, {}),
  ("random", random, {}),
  ("int64", int64_ops, {}),
  ("fast_idiv", fast_idiv, {"DISABLE_FAST_IDIV": 0}),
  ("half_math", half_math, {}),
  ("misc", misc, {}),
  ("mnist", mnist, {}),
  ("big_matmul", big_matmul, {}),
  ("reductions_nolocals", reductions, {"NOLOCALS": 1}),
  ("conv_noopt", conv, {"NOOPT": 1}),
  ("unary_all_float32", unary_all(dtypes.float32), {}),
  ("unary_all_float16", unary_all(dtypes.float16), {}),
  ("conv_shapes", conv_shapes, {}),
  ("where_all_dtypes", where_all_dtypes, {}),
] + [(f"random_exprs_{seed}", random_exprs(seed), {}) for seed in range(40)]

IMAGE = [
  ("image_conv", image_ops, {"IMAGE": 1}),
  ("image_conv_float16", image_half, {"IMAGE": 1, "FLOAT16": 1}),
  ("image_mnist", mnist, {"IMAGE": 1}),
]
