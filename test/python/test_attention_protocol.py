"""The protocol checker on the attention kernels (the checker issue's test
cases): every barrier wait of a kernel -- the producer's empty-barrier
acquires of K and V (and, persistent, of the next tile's Q), the consumers'
one-shot wait for Q, their full-barrier
waits for the peeled first K block, the loop's K and V blocks and the peeled
last V block -- deleted one at a time is reported, and the kernel itself is
clean."""

import pytest

WAIT = "nvvm.mbarrier.try_wait.parity"


def _configs():
    from nvwgmma.kernel.attention import default_config

    d128 = default_config(128)
    return [
        d128,
        default_config(64),
        default_config(256, causal=True),
        default_config(128, causal=True, varlen=True),
        d128.replace(overlap=False, persistent=False),
        d128.replace(pingpong=False),
        d128.replace(persistent=False),
        default_config(256, causal=True).replace(persistent=True),
    ]


def _errors(text):
    from nvwgmma import ir
    from nvwgmma.passmanager import PassManager

    module = ir.Module.parse(text)
    try:
        PassManager.parse("builtin.module(nvwgmma-check-protocol)").run(module.operation)
    except ir.MLIRError as error:
        return [d.message for d in error.error_diagnostics]
    return []


@pytest.mark.parametrize("config", _configs(), ids=lambda c: c.name)
def test_every_deleted_barrier_wait_is_caught(ctx, config):
    from nvwgmma.kernel.attention import build_attention

    module, _ = build_attention(config)
    lines = str(module).split("\n")
    waits = [i for i, line in enumerate(lines) if WAIT in line]
    # Producer: K and V acquires (and, persistent, Q's release by the last
    # tile); consumer: Q, K block 0, the loop's K and V, the last V (the
    # serial schedule has no peeled blocks).
    assert len(waits) == (5 if not config.overlap else 7) + config.persistent
    assert _errors("\n".join(lines)) == []
    missed = []
    for i in waits:
        found = _errors("\n".join(lines[:i] + lines[i + 1 :]))
        if not any("(protocol_c6)" in message for message in found):
            missed.append((i, lines[i].strip(), found))
    assert missed == []
