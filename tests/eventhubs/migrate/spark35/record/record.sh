#!/usr/bin/env bash
# Re-record ../multi and ../single and the connector JSON samples with a real pyspark 3.5.
# Needs network access to PyPI (pyspark 3.5.9, ~320 MB) and Java 17; not run by the tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
venv=${PYSPARK35_VENV:-$work/venv}  # reuse a venv that has pyspark 3.5.9
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q pyspark==3.5.9; }
spark=$("$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
export SPARK_HOME=$spark
mkdir -p "$work/classes"
java -cp "$spark/jars/*" scala.tools.nsc.Main -usejavacp -cp "$spark/jars/*" \
  -d "$work/classes" "$here/RecordCheckpoints.scala"
(cd "$work/classes" && jar cf "$work/record.jar" .)
submit() { "$spark/bin/spark-submit" --class org.apache.spark.sql.ehcheck.Record "$work/record.jar" "$@"; }
# one "initial|end|batch that fails before its commit" per query run (AvailableNow: one batch each)
submit "$work/multi" multi "0,0,0,0|5,7,3,4|-1" "0,0,0,0|12,9,3,10|-1" "0,0,0,0|20,15,8,11|2"
submit "$work/single" single "0,0,0,0|3,4,5,6|-1" "0,0,0,0|8,9,10,11|-1"
"$spark/bin/spark-shell" --master "local[1]" -i "$here/connector_json_order.scala" | grep '^R[0-9]'
echo "recorded into $work/multi and $work/single (query ids and timestamps differ per run)"
