import org.json4s.NoTypeHints
import org.json4s.jackson.Serialization
import scala.collection.mutable
implicit val fmts = Serialization.formats(NoTypeHints)
// Restates what the connector's writer does: sort (hub, partition), fill nested mutable.HashMaps, write with json4s.
def connectorJson(seq: Seq[(String, Int, Long)]): String = {
  val result = new mutable.HashMap[String, mutable.HashMap[Int, Long]]()
  seq.sortBy(t => (t._1, t._2)).foreach { case (h, p, s) =>
    val parts = result.getOrElse(h, new mutable.HashMap[Int, Long])
    parts += p -> s
    result += h -> parts
  }
  Serialization.write(result)
}
println("R1 " + connectorJson((0 until 4).map(p => ("hub", p, 10L + p))))
println("R2 " + connectorJson((0 until 12).map(p => ("orders", p, 100L * p))))
println("R3 " + connectorJson((0 until 32).map(p => ("orders", p, p.toLong))))
println("R4 " + connectorJson(Seq(("ehName1", 0, 456L), ("ehName1", 1, 789L), ("ehName2", 0, 0L))))
println("R5 " + connectorJson((0 until 2).map(p => ("hub", p, 3L))))

println("R6 " + connectorJson((0 until 100).map(p => ("big-hub", p, 1000L + p))))
println("R7 " + connectorJson(Seq(("telemetry", 0, 1L), ("orders", 0, 2L), ("payments", 1, 3L), ("Orders", 0, 4L))))
System.exit(0)
