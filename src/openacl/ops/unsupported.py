"""Operators a CPU cannot run: HCCL collectives, fused NPU kernels, NPU storage layouts. They are declared so that
a program naming one fails with the reason instead of a NameError."""

from __future__ import annotations

from openacl.ops.ir import IrOp, ir

_HCCL = "it is an HCCL collective; openacl has one process and no HCCL ranks"
_FUSED = "it is a fused NPU kernel with no CPU implementation in openacl"
_HCCL_TYPES = (
    "HcomAllReduce",
    "HcomAllGather",
    "HcomReduceScatter",
    "HcomBroadcast",
    "HcomAllToAllV",
    "HcomAllToAll",
    "HcomSend",
    "HcomReceive",
    "HcomReduce",
    "MatmulAllReduce",
    "AllGatherMatmul",
    "MatmulReduceScatter",
)
_FUSED_TYPES = (
    "PromptFlashAttention",
    "IncreFlashAttention",
    "FusedInferAttentionScore",
    "FlashAttentionScore",
    "DynamicQuant",
    "MoeGatingTopKSoftmax",
    "GroupedMatmul",
    "GroupedMatmulFinalizeRouting",
    "AddRmsNorm",
    "RmsNorm",
    "RotaryPositionEmbedding",
    "MoeInitRouting",
    "MoeFinalizeRouting",
)

RECORDS: tuple[IrOp, ...] = (
    *(ir(t, unsupported=_HCCL) for t in _HCCL_TYPES),
    *(ir(t, unsupported=_FUSED) for t in _FUSED_TYPES),
    ir(
        "TransData",
        unsupported="it converts to NPU storage layouts (FRACTAL_NZ, NC1HWC0, ...), which openacl does not keep",
    ),
)
