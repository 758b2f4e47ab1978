package org.apache.spark.sql.ehcheck

import java.io.{BufferedWriter, InputStream, OutputStream, OutputStreamWriter}
import java.nio.charset.StandardCharsets
import scala.collection.mutable
import org.json4s.NoTypeHints
import org.json4s.jackson.Serialization
import org.apache.spark.sql.{DataFrame, SQLContext, SparkSession}
import org.apache.spark.sql.execution.streaming.{HDFSMetadataLog, Offset, Source}
import org.apache.spark.sql.sources.{DataSourceRegister, StreamSourceProvider}
import org.apache.spark.sql.types._
import org.apache.spark.sql.streaming.Trigger

// Records checkpoints with real Spark 3.5 whose Event Hubs source line is what the Scala
// connector writes (see ../README.md). Written for this project; not the connector's code.
object ConnectorJson {
  implicit val fmts = Serialization.formats(NoTypeHints)
  def apply(hub: String, seqNos: Seq[(Int, Long)]): String = {
    val result = new mutable.HashMap[String, mutable.HashMap[Int, Long]]()
    seqNos.sortBy(_._1).foreach { case (p, s) =>
      val parts = result.getOrElse(hub, new mutable.HashMap[Int, Long])
      parts += p -> s
      result += hub -> parts
    }
    Serialization.write(result)
  }
}

case class EhLikeOffset(json: String) extends Offset

class FakeEhProvider extends StreamSourceProvider with DataSourceRegister {
  override def shortName(): String = "fakeeh"
  val schema = StructType(Seq(StructField("body", BinaryType), StructField("partition", StringType),
    StructField("sequenceNumber", LongType)))
  override def sourceSchema(c: SQLContext, s: Option[StructType], p: String, o: Map[String, String]) =
    (shortName(), schema)
  override def createSource(c: SQLContext, metadataPath: String, s: Option[StructType], p: String,
      o: Map[String, String]): Source = new FakeEhSource(c, metadataPath, schema, o)
}

class FakeEhSource(sqlContext: SQLContext, metadataPath: String, val schema: StructType,
    opts: Map[String, String]) extends Source {
  private val hub = opts("hub")
  private def parse(s: String): Seq[(Int, Long)] =
    s.split(",").zipWithIndex.map { case (v, i) => (i, v.trim.toLong) }.toSeq
  private val initial = parse(opts("initial"))
  // the end offset this query run reports (AvailableNow: its only batch)
  private val end = parse(opts("end"))
  private lazy val initLog = {
    val log = new HDFSMetadataLog[String](sqlContext.sparkSession, metadataPath) {
      override def serialize(m: String, out: OutputStream): Unit = {
        out.write(0)
        val w = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8))
        w.write("v1\n"); w.write(m); w.flush()
      }
      override def deserialize(in: InputStream): String = ""
    }
    log.add(0, ConnectorJson(hub, initial))
  }
  override def getOffset: Option[Offset] = { initLog; Some(EhLikeOffset(ConnectorJson(hub, end))) }
  override def getBatch(start: Option[Offset], end: Offset): DataFrame =
    sqlContext.internalCreateDataFrame(sqlContext.sparkContext.emptyRDD, schema, isStreaming = true)
  override def stop(): Unit = ()
}

object Record {
  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    val Array(ck, layout) = args.take(2)
    val runs = args.drop(2) // one "initial|end|failBatch" per run
    runs.zipWithIndex.foreach { case (run, i) =>
      val Array(initial, end, fail) = run.split("\\|")
      val eh = spark.readStream.format(classOf[FakeEhProvider].getName)
        .option("hub", "orders").option("initial", initial).option("end", end).load()
        .selectExpr("cast(body as string) as s")
      val df = if (layout == "multi") {
        val rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 5).load()
          .selectExpr("cast(value as string) as s")
        rate.union(eh)
      } else eh
      val failAt = fail.toLong
      val q = df.writeStream.option("checkpointLocation", ck).trigger(Trigger.AvailableNow())
        .foreachBatch { (d: DataFrame, id: Long) =>
          d.count()
          if (id == failAt) throw new RuntimeException(s"recording: fail batch $id before its commit")
        }.start()
      try q.awaitTermination() catch { case e: Exception => println(s"run $i ended: ${e.getClass.getSimpleName}") }
    }
    spark.stop()
  }
}
