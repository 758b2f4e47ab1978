"""Driver-side partition metadata against the emulator, without Spark."""

from __future__ import annotations

import json
import math
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._metadata import HubMetadata
from pysparksources.eventhubs._positions import parse_position
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator, Fault
from support.eventhubs import close_producers, send


def _metadata(conn: str, **options: str) -> HubMetadata:
    return HubMetadata(parse_options({"connectionString": conn, **options}, Use.STREAM_READ))


def test_properties_of_every_partition_are_read_and_cached(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    before = datetime.now(timezone.utc) - timedelta(milliseconds=5)
    send(conn, ["a", "b", "c"], partition_id="1")
    after = datetime.now(timezone.utc) + timedelta(milliseconds=5)
    meta = _metadata(conn, partitionInfoCacheInterval="60s")
    try:
        infos = meta.partitions(fresh=True)
        assert (infos["1"].beginning, infos["1"].latest, infos["1"].empty) == (0, 3, False)
        enqueued = infos["1"].last_enqueued
        assert enqueued is not None and before <= enqueued <= after  # the newest event's time
        assert all(info.empty for pid, info in infos.items() if pid != "1")
        send(conn, ["d"], partition_id="1")
        assert meta.partitions()["1"].latest == 3  # cached: polling costs no call
        assert meta.partitions(fresh=True)["1"].latest == 4
    finally:
        meta.close()


def test_a_management_reply_slower_than_operation_timeout_fails_naming_it(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    eventhubs_emulator.add_fault(Fault("delay", link="management", delay=6.0, times=None))
    meta = _metadata(conn, operationTimeout="1s")
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=r"operationTimeout \(1s\)"):
            meta.partitions(fresh=True)
    finally:
        meta.close()
    assert time.monotonic() - started < 5.0


@pytest.mark.slow
def test_after_timed_out_calls_the_next_one_succeeds_and_no_thread_or_connection_is_left(
    eventhubs_emulator_factory: Any,
) -> None:
    # Each timed-out fetch abandons its 16 calls (one per partition) while the emulator holds
    # their replies. Before, they kept the 16 threads of a shared pool busy, so the first fetch
    # after the service recovered queued behind them and timed out as well.
    emulator = eventhubs_emulator_factory(hubs={"test": 16})
    conn = emulator.connection_string("test")
    threads_before = threading.active_count()
    meta = _metadata(conn, operationTimeout="4s")
    try:
        meta.partitions(fresh=True)  # partition ids are now cached: fetches read properties
        held = emulator.add_fault(Fault("delay", link="management", delay=12.0, times=None))
        for _ in range(2):
            with pytest.raises(TimeoutError, match=r"partition properties .* operationTimeout"):
                meta.partitions(max_age=0)
        emulator.faults.remove(held)
        send(conn, ["a"], partition_id="3")
        close_producers()  # the seeding producer's connection is not a leak
        assert meta.partitions(max_age=0)["3"].latest == 1
    finally:
        meta.close()
    deadline = time.monotonic() + 30
    while threading.active_count() > threads_before or emulator.connection_count() > 0:
        assert time.monotonic() < deadline, (
            f"{threading.active_count() - threads_before} threads and "
            f"{emulator.connection_count()} connections left after the held replies arrived"
        )
        time.sleep(0.2)


def _backlog_before(conn: str, partition: str, count: int) -> datetime:
    """Send ``count`` events to one partition; return a time just before them."""
    cut = datetime.now(timezone.utc) - timedelta(seconds=1)
    send(conn, [f"e{i}" for i in range(count)], partition_id=partition)
    return cut


@pytest.mark.slow
def test_a_start_position_found_after_a_slow_link_attach_keeps_the_backlog(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Finding an enqueuedTime position needs one receive. It used to give up after 5 s and
    # start at the end, skipping the backlog without a word; now it waits operationTimeout.
    conn = eventhubs_emulator.connection_string("test")
    cut = _backlog_before(conn, "0", 5)
    position = parse_position(json.dumps({"enqueuedTime": cut.isoformat()}))
    eventhubs_emulator.add_fault(Fault("delay", link="receiver", partition=0, delay=7.0))
    meta = _metadata(conn, operationTimeout="60s")
    try:
        assert meta.resolve({"0": position, "1": position}) == {"0": 0, "1": 0}
    finally:
        meta.close()


def test_an_unfindable_start_position_fails_naming_partition_position_and_timeout(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    cut = _backlog_before(conn, "1", 3)
    position = parse_position(json.dumps({"enqueuedTime": cut.isoformat()}))
    # Two receivers attach to partition 1 (the only one with events): the consumer group
    # check's, then the search's. Both attach late (the check is waited for up to
    # operationTimeout too, then the query goes on).
    eventhubs_emulator.add_fault(Fault("delay", link="receiver", partition=1, delay=20.0, times=2))
    meta = _metadata(conn, operationTimeout="2s")
    try:
        with pytest.raises(TimeoutError) as caught:
            meta.resolve({"0": position, "1": position})
    finally:
        meta.close()
    message = str(caught.value)
    assert "partition 1 " in message and "operationTimeout (2s)" in message
    assert f"enqueuedTime {position.enqueued_time}" in message
    key = conn.split("SharedAccessKey=", 1)[1].split(";", 1)[0]
    assert key not in message and "SharedAccessKey" not in message


def test_positions_past_the_last_event_start_at_the_end_without_a_receive(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # The properties say no event is at or after these positions: the first one will be the
    # next written. A receive would wait operationTimeout for nothing and then fail.
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="0")
    meta = _metadata(conn, operationTimeout="10s")
    try:
        last = meta.partitions(fresh=True)["0"].last_offset
        assert last is not None
        future = datetime.now(timezone.utc) + timedelta(hours=1)
        positions = {
            "0": parse_position(json.dumps({"offset": last, "isInclusive": False})),
            "1": parse_position(json.dumps({"enqueuedTime": future.isoformat()})),
        }
        assert meta.resolve(positions) == {"0": 2, "1": 0}
        inclusive = parse_position(json.dumps({"offset": last}))
        assert meta.resolve({"0": inclusive}) == {"0": 1}
    finally:
        meta.close()


@pytest.mark.slow
def test_partitions_are_searched_concurrently(eventhubs_emulator_factory: Any) -> None:
    # Four partitions whose receivers each attach 3 s late: searched one after another, at
    # most one receiver connection would be open at a time.
    emulator = eventhubs_emulator_factory(hubs={"test": 4})
    conn = emulator.connection_string("test")
    cuts = [_backlog_before(conn, str(pid), 2) for pid in range(4)]
    close_producers()  # only the search's receivers may count as connections
    position = parse_position(json.dumps({"enqueuedTime": min(cuts).isoformat()}))
    meta = _metadata(conn, operationTimeout="60s", partitionInfoCacheInterval="60s")
    meta.partitions(fresh=True)
    emulator.add_fault(Fault("delay", link="receiver", delay=3.0, times=4))
    result: dict[str, int] = {}
    searching = threading.Thread(
        target=lambda: result.update(meta.resolve({str(p): position for p in range(4)}))
    )
    peak = 0
    try:
        searching.start()
        while searching.is_alive():
            peak = max(peak, emulator.connection_count())
            time.sleep(0.05)
    finally:
        searching.join()
        meta.close()
    assert result == {"0": 0, "1": 0, "2": 0, "3": 0}
    assert peak >= 4, f"at most {peak} receivers were open at once"


def test_expired_info_answers_at_once_while_a_background_fetch_replaces_it(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    meta = _metadata(conn, partitionInfoCacheInterval="200ms")
    try:
        assert meta.partitions(fresh=True)["0"].latest == 0
        send(conn, ["a", "b"], partition_id="0")
        time.sleep(0.3)
        started = time.monotonic()
        assert meta.partitions()["0"].latest == 0  # expired, yet no wait for the service
        assert time.monotonic() - started < 0.1
        deadline = time.monotonic() + 10
        while meta.partitions()["0"].latest != 2:
            assert time.monotonic() < deadline, "the background fetch never landed"
            time.sleep(0.05)
        assert meta.partitions(max_age=math.inf)["0"].latest == 2
    finally:
        meta.close()


def test_a_new_receiver_does_not_wait_for_a_management_request(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # The SDK's receive_batch asks for the partition ids before receiving; a read task knows
    # its partition, so its client answers itself. With management replies held back 30 s,
    # the receiver still gets its first event at once.
    from pysparksources.eventhubs._receivers import PositionedReceiver

    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="1")
    config = parse_options({"connectionString": conn}, Use.STREAM_READ)
    eventhubs_emulator.add_fault(Fault("delay", link="management", delay=30.0, times=None))
    receiver = PositionedReceiver(config, "1", 0)
    try:
        first = receiver.first_event(timeout=5.0)
        assert first is not None and first.body_as_str() == "a"
    finally:
        receiver.close()
        eventhubs_emulator.clear_faults()


@pytest.mark.slow
def test_a_parked_receiver_that_spins_after_the_service_vanishes_is_closed(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Once the service is gone, the SDK's receive loop retries without pausing (a full core),
    # or reports the lost connection. The process's housekeeping thread closes a parked
    # receiver either way within seconds, not after receiverIdleTimeout, and keeps an idle
    # receiver on a healthy connection. Nothing else sweeps here: closed means the thread did.
    from pysparksources._core.process_caches import PROCESS
    from pysparksources.eventhubs._receivers import PositionedReceiver, release

    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a"], partition_id="0")
    config = parse_options({"connectionString": conn, "receiverIdleTimeout": "1h"}, Use.STREAM_READ)
    receiver = PositionedReceiver(config, "0", 0)
    try:
        assert receiver.first_event(timeout=5.0) is not None
        release(receiver, ok=True)
        assert PROCESS.thread is not None and PROCESS.thread.is_alive()
        time.sleep(6.0)  # sixty of the housekeeping thread's rounds
        assert receiver.alive, "a healthy idle receiver was closed"
        eventhubs_emulator.stop()
        deadline = time.monotonic() + 10
        while not receiver.closed:
            assert time.monotonic() < deadline, "the receiver was not closed in 10 s"
            time.sleep(0.01)
        assert PROCESS.thread.is_alive()
    finally:
        receiver.close()


class _TokenEndpoint:
    """A local stand-in for App Service's managed identity endpoint; counts token requests."""

    def __init__(self) -> None:
        import http.server

        endpoint = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                endpoint.requests += 1
                body = json.dumps(
                    {
                        "access_token": "not-a-real-token",
                        "expires_on": str(int(time.time()) + 3600),
                        "resource": "https://eventhubs.azure.net",
                        "token_type": "Bearer",
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/msi/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_clients_of_one_connection_share_its_credential_and_token(
    eventhubs_emulator: EventHubsEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every receiver and management call builds a client. A managed identity credential per
    # client fetched a token from the identity endpoint for each of them.
    endpoint = _TokenEndpoint()
    monkeypatch.setenv("IDENTITY_ENDPOINT", endpoint.url)
    monkeypatch.setenv("IDENTITY_HEADER", "local-test")
    raw = {
        "fullyQualifiedNamespace": eventhubs_emulator.endpoint,
        "eventHubName": "test",
        "auth": "managedIdentity",
    }
    connection = parse_options(raw, Use.STREAM_READ).connection
    try:
        for _ in range(3):
            client = connection.consumer_client("$Default", use_tls=False)  # the emulator
            try:
                assert client.get_partition_ids() == ["0", "1"]
            finally:
                client.close()
    finally:
        endpoint.stop()
    assert endpoint.requests == 1


def _peak_connections(emulator: Any, work: Any) -> tuple[Any, int]:
    """``work()``'s result and the most connections the emulator held at once meanwhile."""
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(work()))
    peak = 0
    worker.start()
    while worker.is_alive():
        peak = max(peak, emulator.connection_count())
        time.sleep(0.02)
    worker.join()
    assert result, "the fetch failed (see the thread's traceback)"
    return result[0], peak


def test_expected_partitions_are_read_beside_the_ids_not_after_them(
    eventhubs_emulator_factory: Any,
) -> None:
    # Every management reply is held 1 s: the ids call and the two properties calls can only
    # be open together if the properties did not wait for the ids.
    emulator = eventhubs_emulator_factory(hubs={"test": 2})
    conn = emulator.connection_string("test")
    send(conn, ["a", "b", "c"], partition_id="1")
    close_producers()  # only management calls may count as connections
    emulator.add_fault(Fault("delay", link="management", delay=1.0, times=None))
    expected = _metadata(conn, startingPositions=json.dumps({"0": {"seqNo": 0}}))
    expected.expect(["1"])  # as latestOffset does with a checkpoint's partitions
    unexpected = _metadata(conn)
    try:
        infos, peak = _peak_connections(emulator, lambda: expected.partitions(fresh=True))
        assert peak >= 3, f"at most {peak} management calls were open at once"
        assert (infos["1"].beginning, infos["1"].latest) == (0, 3) and infos["0"].empty
        # Without a guess the ids come first, then the properties: never three at once.
        plain, peak = _peak_connections(emulator, lambda: unexpected.partitions(fresh=True))
        assert peak <= 2 and plain == infos
    finally:
        expected.close()
        unexpected.close()


def test_an_expected_partition_the_hub_lacks_is_not_waited_for(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Asking for partition 7's properties fails only after the SDK's retries (~13 s here);
    # the ids call already says it does not exist, so the fetch goes on without it.
    conn = eventhubs_emulator.connection_string("test")
    meta = _metadata(conn)
    meta.expect(["0", "7"])
    started = time.monotonic()
    try:
        infos = meta.partitions(fresh=True)
        assert time.monotonic() - started < 8.0
        assert sorted(infos, key=int) == [str(p) for p in range(len(infos))] and "7" not in infos
    finally:
        meta.close()
