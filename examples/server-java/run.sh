#!/bin/sh
# Run the example server (built by the steps of README.md); options follow, e.g. --dev-key --port 0.
here=$(cd "$(dirname "$0")" && pwd)
exec java -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" mrtrstate.example.Main "$@"
