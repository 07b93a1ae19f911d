"""The protobuf schemas of GE's graph files, written for gebench from the dump-format spec.

``ge_ir.proto`` (package ``ge.proto``: ``ModelDef`` for ge_proto dumps and AIR files) and ``ge_onnx.proto``
(package ``ge.onnx``: the ONNX-shaped ge_onnx dumps). ``*_pb2.py`` are generated from them by
``scripts/gen_proto.sh``; edit the ``.proto`` files, never the generated modules.
"""
