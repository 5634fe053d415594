#!/bin/sh
# The Java library's conformance adapter, speaking the protocol of `mrtr-state conformance`
# (docs/conformance.md) on standard input and output:
#
#     mrtr-state conformance -- java/conformance.sh
#
# It builds the library first when it has not been built (Maven's output goes to standard error).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$here/target/classes/dev/mrtrstate/conformance/ConformanceMain.class" ] \
    || [ ! -f "$here/target/classpath.txt" ]; then
    (cd "$here" && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt \
        -DincludeScope=runtime) >&2
fi
exec java -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" dev.mrtrstate.conformance.ConformanceMain
