"""Write an ATC AIPP config into an ONNX model, so openacl runs the model as ATC would have converted it.

    python -m openacl.model.aipp_embed MODEL.onnx AIPP.cfg OUT.onnx [--input-format NHWC]

ATC reads the config named by ``--insert_op_conf``; openacl reads the same text from the model's metadata
(``insert_op_conf``), with ATC's ``--input_format`` as the metadata key ``input_format``. The result is checked
as a load checks it (the AIPP declaration and onnxruntime), and written only if it passes, whole or not at all.
Put it beside the program's ``.om`` as ``<name>.onnx`` and the program's ``load_from_file("<name>.om")`` runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from openacl import lazy
from openacl.atomicfile import replacing
from openacl.errors import AclError
from openacl.model import aipp_config, dynamic
from openacl.model import model as _model

onnx = lazy.module("onnx")


def embed(model_path: str | Path, cfg_text: str, out_path: str | Path, input_format: str | None = None) -> None:
    """Write ``model_path`` with ``cfg_text`` (and ``input_format``) in its metadata to ``out_path``; raises
    ``AclError`` (``ACL_ERROR_PARSE_MODEL``, naming the rule) if openacl would refuse to load the result."""
    model = onnx.load(str(model_path))
    values = {aipp_config.METADATA_KEY: cfg_text}
    if input_format is not None:
        values[dynamic.LAYOUT_KEY] = input_format
    kept = [(p.key, p.value) for p in model.metadata_props if p.key not in values]
    del model.metadata_props[:]
    for key, value in [*kept, *values.items()]:
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    data = model.SerializeToString()
    _model.describe_bytes(data, str(out_path))  # the checks of a load, on the bytes about to be written
    with replacing(out_path, "wb") as out:
        out.write(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openacl.model.aipp_embed", description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the ONNX model ATC would convert")
    parser.add_argument("config", help="ATC's AIPP config (--insert_op_conf)")
    parser.add_argument("out", help="the ONNX model to write")
    parser.add_argument("--input-format", choices=dynamic.LAYOUTS, help="ATC's --input_format, if not NCHW")
    args = parser.parse_args(argv)
    try:
        embed(args.model, Path(args.config).read_text(), args.out, args.input_format)
    except (AclError, OSError) as exc:
        print(f"aipp_embed: {exc.detail if isinstance(exc, AclError) else exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
