#!/usr/bin/env bash
# Regenerate gebench/io/proto/*_pb2.py from the .proto schemas next to them.
# Needs grpcio-tools (a development dependency): `pip install grpcio-tools`.
# Set PYTHON to pick the interpreter that has it (default: .venv/bin/python, then python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
if ! "$python" -c "import grpc_tools.protoc" 2>/dev/null; then
  echo "gen_proto.sh: $python has no grpc_tools; run '$python -m pip install grpcio-tools' or set PYTHON" >&2
  exit 1
fi
cd "$root"
# The repository-relative proto path keeps the descriptor file names unique in protobuf's default pool.
for proto in gebench/io/proto/ge_ir.proto gebench/io/proto/ge_onnx.proto; do
  "$python" -m grpc_tools.protoc --proto_path=. --python_out=. "$proto"
done
echo "regenerated: $(ls gebench/io/proto/*_pb2.py | tr '\n' ' ')"
