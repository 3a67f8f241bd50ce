#!/bin/sh
# Start usi_engine for a shogi GUI (ShogiHome, ShogiGUI, Shogidokoro, ...).
# Register this file as the engine executable. It finds a Python interpreter,
# changes to the repository root and runs the USI loop unbuffered.
# Override the interpreter with USI_ENGINE_PYTHON=/path/to/python.
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT" || exit 1
PY="${USI_ENGINE_PYTHON:-}"
if [ -z "$PY" ]; then
    for cand in "$ROOT/.venv/bin/python" "$ROOT/venv/bin/python" python3 python; do
        if command -v "$cand" >/dev/null 2>&1; then PY="$cand"; break; fi
    done
fi
if [ -z "$PY" ]; then
    echo "info string usi-engine.sh: no python interpreter found (set USI_ENGINE_PYTHON)"
    exit 1
fi
exec "$PY" -u -m usi_engine "$@"
