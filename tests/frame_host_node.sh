#!/bin/sh
# frame_host_node.sh - run tests/frame_host.mjs (the Node.js host written
# from frame-protocol.md alone) under make check; a visible skip (77) where
# node is missing or older than 18.
node=$(command -v node 2>/dev/null) || { echo "SKIP frame_host.mjs: no node on PATH"; exit 77; }
major=$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || major=0
if [ "$major" -lt 18 ]; then
    echo "SKIP frame_host.mjs: node $major is older than 18"
    exit 77
fi
exec "$node" "${GK_SRCDIR:-.}/tests/frame_host.mjs" "$@"
