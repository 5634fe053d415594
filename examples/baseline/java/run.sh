#!/bin/sh
# Run the baseline verifier (built by `mvn -q -B compile dependency:build-classpath ...`, see conformance.json).
here=$(cd "$(dirname "$0")" && pwd)
exec java -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" Baseline
