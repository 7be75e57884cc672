"""The Python kernel API: one kernel of each ISA on numpy data, on the JIT and
the interpreter, with exact results; failures as WavejitError / ValueError."""

import numpy as np
import pytest
import samples

import wavejit
from wavejit import Agent, Engine, Isa, WavejitError

SENTINEL = 0xDEADBEEF
ENGINES = [Engine.JIT, Engine.INTERPRETER]


@pytest.fixture(params=ENGINES, ids=lambda e: e.name)
def agent(request):
    with Agent(request.param) as a:
        yield a


def test_rv32_scale_add_with_a_partial_workgroup(agent):
    # RV32 addresses memory below 4 GiB: buffers and the argument block are placed.
    n = 100
    data = ((np.arange(n, dtype=np.uint32) ** 2) ^ 0x55).astype(np.uint32)
    agent.upload(data, address=0x1000)
    out = agent.upload(np.full(n + 28, SENTINEL, np.uint32), address=0x2000)
    args = agent.upload(np.array([0x1000, 0x2000], np.uint32), address=samples.RV32_ARGS)
    k = agent.load(Isa.RV32, samples.RV32_SCALE_ADD, kernarg_size=8)
    agent.dispatch(k, n, 32, kernarg=args)
    want = np.concatenate([data * np.uint32(3) + np.uint32(7), np.full(28, SENTINEL, np.uint32)])
    np.testing.assert_array_equal(out.read(np.uint32), want)
    assert out.read(np.uint32)[:3].tolist() == [0x55 * 3 + 7, (1 ^ 0x55) * 3 + 7, (4 ^ 0x55) * 3 + 7]


def test_ir3_axpy_reads_pointers_from_the_const_file(agent):
    cells, n = 128, 100
    a = np.arange(cells, dtype=np.float32) * np.float32(0.5)
    b = np.float32(3.0) - np.arange(cells, dtype=np.float32)
    ba, bb = agent.upload(a), agent.upload(b)
    out = agent.upload(np.full(cells, SENTINEL, np.uint32))
    k = agent.load(Isa.IR3, samples.IR3_AXPY, kernarg_size=24)
    agent.dispatch(k, n, samples.IR3_WORKGROUP, [out, ba, bb])
    got = out.read(np.uint32)
    # b * 2 is exact, so the fused multiply-add equals a + 2b rounded once.
    want = (a[:n] + np.float32(2) * b[:n]).view(np.uint32)
    np.testing.assert_array_equal(got[:n], want)
    np.testing.assert_array_equal(got[n:], np.full(cells - n, SENTINEL, np.uint32))
    assert out.read(np.float32)[:3].tolist() == [6.0, 4.5, 3.0]


def test_agx_add_finds_buffers_in_uniform_pairs(agent):
    cells, n = 96, 77
    a = np.arange(cells, dtype=np.uint32) * np.uint32(1000)
    b = (np.uint32(0xFFFFFFF0) + np.arange(cells, dtype=np.uint32)).astype(np.uint32)
    ba, bb = agent.upload(a), agent.upload(b)
    out = agent.upload(np.full(cells, SENTINEL, np.uint32))
    k = agent.load(Isa.AGX, samples.AGX_ADD, kernarg_size=24)
    agent.dispatch(k, n, 32, [ba, bb, out])
    got = out.read(np.uint32)
    np.testing.assert_array_equal(got[:n], a[:n] + b[:n] + np.uint32(7))  # wraps mod 2^32
    np.testing.assert_array_equal(got[n:], np.full(cells - n, SENTINEL, np.uint32))
    assert got[:2].tolist() == [0xFFFFFFF7, 992]


def test_ir_text_kernel_and_a_view_that_shares_memory():
    # IR text: store the work-item id at out[id]; written through a numpy view.
    src = """kernel @ids shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = zext.i32.i64 v4
  v8 = const.i64 2
  v9 = shl.i64 v7, v8
  v10 = iadd.i64 v6, v9
  store.global.i32 v10, v4
  exit
}
"""
    with Agent() as agent:
        out = agent.alloc(4 * 64)
        view = out.view(np.uint32)
        view[:] = SENTINEL
        k = agent.load(Isa.IR_TEXT, src, kernarg_size=8)
        agent.dispatch(k, 40, 8, [out])
        assert view[:40].tolist() == list(range(40))
        assert view[40:].tolist() == [SENTINEL] * 24


def test_bad_code_is_a_wavejit_error_with_the_status_and_message():
    with Agent() as agent:
        k = agent.load(Isa.IR3, samples.IR3_AXPY[:12], kernarg_size=24)
        buf = agent.alloc(256)
        with pytest.raises(WavejitError) as e:
            agent.dispatch(k, 64, 64, [buf, buf, buf])
        assert e.value.status == 0x1010
        assert e.value.status_name == "ERROR_INVALID_CODE_OBJECT"
        assert "12 code bytes are not whole 64-bit instructions" in e.value.message

        k = agent.load(Isa.IR3, samples.IR3_AXPY, kernarg_size=24, wave_size=32)
        with pytest.raises(WavejitError) as e:
            agent.dispatch(k, 64, 64, [buf, buf, buf])
        assert e.value.status == 0x100F and "wave size 32" in e.value.message


def test_budget_overrun_is_reported():
    with Agent(max_work_items=1000) as agent:
        k = agent.load(Isa.AGX, samples.AGX_ADD, kernarg_size=24)
        buf = agent.alloc(4 * 4096)
        with pytest.raises(WavejitError) as e:
            agent.dispatch(k, 2048, 64, [buf, buf, buf])
        assert e.value.status == 0x1001
        assert "2048 work-items exceed the dispatch work-item budget of 1000" in e.value.message


def test_bad_arguments_raise_before_reaching_the_library():
    agent = Agent()
    k = agent.load(Isa.AGX, samples.AGX_ADD, kernarg_size=24)
    with pytest.raises(ValueError, match="grid"):
        agent.dispatch(k, 0, 32)
    with pytest.raises(ValueError, match="block"):
        agent.dispatch(k, 64, (32, 1, 1, 1))
    with pytest.raises(ValueError, match="kernel argument 1"):
        agent.dispatch(k, 64, 32, [0, -1])
    with pytest.raises(ValueError, match="positive"):
        agent.alloc(0)
    with pytest.raises(ValueError, match="do not fit"):
        agent.alloc(8).write(np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="empty"):
        agent.load(Isa.RV32, b"")
    freed = agent.alloc(16)
    agent.free(freed)
    with pytest.raises(ValueError, match="was freed"):
        freed.read()
    with pytest.raises(ValueError, match="was freed"):
        agent.free(freed)
    buf = agent.alloc(16)
    agent.close()
    with pytest.raises(ValueError, match="closed"):
        buf.read()
    with pytest.raises(ValueError, match="closed"):
        agent.alloc(16)


def test_overlapping_placement_is_an_allocation_error():
    with Agent() as agent:
        agent.alloc(0x1000, address=0x10000)
        with pytest.raises(WavejitError) as e:
            agent.alloc(0x100, address=0x10800)
        assert e.value.status == 0x1003


def test_pack_args():
    assert wavejit.pack_args([1, 0x1122334455667788]) == bytes.fromhex("0100000000000000" "8877665544332211")
