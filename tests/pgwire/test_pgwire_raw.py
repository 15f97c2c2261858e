"""The protocol state machine and malformed input, driven byte by byte over raw sockets."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from pgwire_raw_client import (FLUSH, SYNC, RawClient, bind, cstr, describe, error_fields, execute,
                               msg, parse, query, send_cancel, startup_packet)


def kinds(msgs):
    return [k for k, _ in msgs]


def wait_for(pred, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_startup_reports_parameters_and_key(pg):
    c = RawClient(pg.host, pg.port)
    msgs = c.startup(user="alice", database="db", application_name="raw-app",
                     options="-c search_path=s1 --cluster=quick")
    assert kinds(msgs)[0] == b"R" and msgs[0][1] == b"\x00\x00\x00\x00"
    status = dict(body.rstrip(b"\x00").split(b"\x00") for k, body in msgs if k == b"S")
    assert status[b"server_version"] == b"15.0"
    assert status[b"client_encoding"] == b"UTF8"
    assert status[b"DateStyle"] == b"ISO, MDY"
    assert status[b"application_name"] == b"raw-app"
    assert status[b"session_authorization"] == b"alice"
    assert status[b"standard_conforming_strings"] == b"on"
    assert kinds(msgs)[-2:] == [b"K", b"Z"] and msgs[-1][1] == b"I"
    session = next(s for s in pg.adapter.started_sessions if s.pid == c.pid)
    assert session.vars["search_path"] == "s1" and session.vars["cluster"] == "quick"
    assert session.database == "db" and session.secret_key == c.key
    c.close()


def test_ssl_and_gssenc_requests_are_declined(pg):
    c = RawClient(pg.host, pg.port)
    c.send(struct.pack(">ii", 8, 80877103))
    assert c._recv_exactly(1) == b"N"
    c.send(struct.pack(">ii", 8, 80877104))
    assert c._recv_exactly(1) == b"N"
    msgs = c.startup(user="bob")
    assert kinds(msgs)[-1] == b"Z"
    session = next(s for s in pg.adapter.started_sessions if s.pid == c.pid)
    assert session.database == "bob"  # defaults to the user name, as in PostgreSQL
    c.close()


def test_pq_options_get_negotiate_protocol_version(pg):
    c = RawClient(pg.host, pg.port)
    msgs = c.startup(**{"user": "x", "_pq_.ext": "1"})
    assert kinds(msgs)[0] == b"v"
    minor, n = struct.unpack(">ii", msgs[0][1][:8])
    assert (minor, n) == (0, 1) and b"_pq_.ext" in msgs[0][1]
    c.close()


def test_startup_error_is_fatal(pg):
    c = RawClient(pg.host, pg.port)
    c.send(startup_packet(user="x", database="nope"))
    kind, body = c.read_message()
    assert (kind, body) == (b"R", b"\x00\x00\x00\x00")  # as in PostgreSQL: authenticated first
    kind, body = c.read_message()
    f = error_fields(body)
    assert kind == b"E" and f["S"] == "FATAL" and f["C"] == "3D000"
    assert c.closed_by_server()


def test_simple_query_multiple_statements_and_error_stops_the_rest(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("select 1; select 1/0; select 2"))
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"T", b"D", b"C", b"E", b"Z"]
    assert error_fields(msgs[3][1])["C"] == "22012"
    c.send(query("   "))
    assert kinds(c.read_until_ready()) == [b"I", b"Z"]
    c.close()


def test_a_message_larger_than_the_read_buffer_is_read_whole(pg):
    """A statement of several MB (PostgreSQL accepts messages up to 1 GiB): reading paused at the
    4 MB high-water mark and then waited forever for the rest (found by the protocol fuzzer)."""
    c = RawClient(pg.host, pg.port, timeout=30)
    c.startup()
    c.send(query("select 1; " + "select 1/0; " * 600_000))
    msgs = c.read_until_ready()
    assert kinds(msgs)[:3] == [b"T", b"D", b"C"] and kinds(msgs)[-2:] == [b"E", b"Z"]
    c.send(query("select 2"))
    assert kinds(c.read_until_ready()) == [b"T", b"D", b"C", b"Z"]
    c.close()


def test_extended_error_skips_until_sync(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(parse("", "boom") + bind("", "") + execute() + SYNC)
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"E", b"Z"]
    assert error_fields(msgs[0][1])["C"] == "42P01"
    c.send(parse("", "select 7") + bind("", "") + execute() + SYNC)
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"1", b"2", b"D", b"C", b"Z"]
    assert msgs[2][1].endswith(b"7")
    c.close()


def test_execute_max_rows_suspends_and_resumes(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("begin"))
    c.read_until_ready()
    c.send(parse("s", "select * from generate(5)") + bind("p", "s") + describe(b"P", "p")
           + execute("p", 2) + FLUSH)
    got = [c.read_message() for _ in range(6)]
    assert kinds(got) == [b"1", b"2", b"T", b"D", b"D", b"s"]
    c.send(execute("p", 2) + execute("p", 2) + SYNC)
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"D", b"D", b"s", b"D", b"C", b"Z"]
    assert msgs[-2][1] == b"SELECT 5\x00" and msgs[-1][1] == b"T"
    c.send(msg(b"C", b"P" + cstr("p")) + msg(b"C", b"S" + cstr("s")) + SYNC)
    assert kinds(c.read_until_ready()) == [b"3", b"3", b"Z"]
    c.close()


def test_describe_statement_reports_params_and_binary_results(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(parse("q", "select $1::int8, 'a' as name", [0]) + describe(b"S", "q")
           + bind("", "q", [b"\x00\x00\x00\x00\x00\x00\x00\x2a"], [1, 0]) + execute() + SYNC)
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"1", b"t", b"T", b"E", b"Z"]  # binary bytes sent as a text param
    assert error_fields(msgs[3][1])["C"] == "22P02"
    c.send(query("select 1"))
    c.read_until_ready()
    # text parameter "42" declared int8 (oid 20), binary result for column 1
    c.send(bind("", "q", [b"42"], [1, 0]) + execute() + SYNC)
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"2", b"D", b"C", b"Z"]
    row = msgs[1][1]
    assert row == struct.pack(">hi", 2, 8) + struct.pack(">q", 42) + struct.pack(">i", 1) + b"a"
    c.close()


def test_unknown_message_type_is_a_protocol_violation(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(msg(b"!", b"xyz"))
    kind, body = c.read_message()
    assert kind == b"E" and error_fields(body)["C"] == "08P01"
    assert c.closed_by_server()


@pytest.mark.parametrize("payload", [
    b"Q" + struct.pack(">i", 2),                      # length smaller than itself
    b"Q" + struct.pack(">i", (1 << 30) + 100),        # over the 1 GiB cap
    parse("", "select 1") + msg(b"B", b"\x00\x00\x00\x01"),  # truncated Bind
    msg(b"Q", b"no terminator"),                      # string without NUL
])
def test_malformed_messages_close_with_08P01(pg, payload):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(payload)
    kind, body = c.read_message()
    if kind == b"1":  # ParseComplete of the statement the Bind refers to
        kind, body = c.read_message()
    assert kind == b"E" and error_fields(body)["C"] == "08P01"
    assert error_fields(body)["S"] == "FATAL"
    assert c.closed_by_server()


@pytest.mark.parametrize("garbage", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00\x00\x00\x03",
                                     b"\x00\x00\x00\x10\x00\x09\x00\x00user\x00x\x00\x00\x00"])
def test_garbage_at_startup_never_hurts_the_server(pg, garbage):
    with socket.create_connection((pg.host, pg.port), timeout=5) as s:
        s.sendall(garbage)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(5)
        while s.recv(4096):
            pass
    c = RawClient(pg.host, pg.port)
    assert kinds(c.startup())[-1] == b"Z"
    c.close()


def test_abrupt_disconnect_mid_message_closes_the_session(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    pid = c.pid
    c.send(b"Q" + struct.pack(">i", 100) + b"select")  # half a message, then gone
    c.close()
    assert wait_for(lambda: pid in pg.adapter.closed_sessions)


def test_disconnect_during_endless_stream_cleans_up(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    pid = c.pid
    c.send(query("subscribe endless"))
    kind, _ = c.read_message()
    assert kind == b"T"
    c.read_message()
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
    c.close()
    assert wait_for(lambda: pid in pg.adapter.closed_sessions)


def test_cancel_request_stops_endless_copy_and_session_survives(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("copy (subscribe endless) to stdout"))
    assert c.read_message()[0] == b"H"
    rows = [c.read_message() for _ in range(3)]
    assert [k for k, _ in rows] == [b"d"] * 3
    assert rows[0][1] == b"1000\t1\tv0\n"
    send_cancel(pg.host, pg.port, c.pid, c.key ^ 1)  # wrong key: ignored
    time.sleep(0.2)
    send_cancel(pg.host, pg.port, c.pid, c.key)
    msgs = c.read_until_ready()
    err = error_fields(msgs[-2][1])
    assert msgs[-2][0] == b"E" and err["C"] == "57014"
    assert err["M"] == "canceling statement due to user request"
    c.send(query("select 1"))
    assert kinds(c.read_until_ready()) == [b"T", b"D", b"C", b"Z"]
    c.close()


def test_copy_in_and_copy_fail(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("copy sink from stdin"))
    kind, body = c.read_message()
    assert kind == b"G" and body == struct.pack(">bhhh", 0, 2, 0, 0)
    c.send(msg(b"d", b"1\ta\n") + msg(b"d", b"2\tb\n") + msg(b"c"))
    msgs = c.read_until_ready()
    assert msgs[0] == (b"C", b"COPY 2\x00")
    assert b"1\ta\n2\tb\n" in pg.adapter.copied
    c.send(query("copy sink from stdin"))
    assert c.read_message()[0] == b"G"
    c.send(msg(b"d", b"3\tc\n") + msg(b"f", cstr("client gave up")))
    msgs = c.read_until_ready()
    err = error_fields(msgs[0][1])
    assert err["C"] == "57014" and "client gave up" in err["M"]
    c.close()


def test_notices_and_parameter_status_before_ready(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("notice; set application_name = 'zz'"))
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"N", b"C", b"C", b"S", b"Z"]
    assert error_fields(msgs[0][1])["M"] == "hello from the adapter"
    assert msgs[3][1] == b"application_name\x00zz\x00"
    c.close()


def test_large_result_arrives_whole(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("select * from generate(50000)"))
    msgs = c.read_until_ready()
    assert kinds(msgs)[0] == b"T" and kinds(msgs)[-2:] == [b"C", b"Z"]
    assert sum(1 for k, _ in msgs if k == b"D") == 50000
    assert msgs[-2][1] == b"SELECT 50000\x00" and msgs[-3][1].endswith(b"row 49999")
    c.close()


def test_server_close_ends_connections_and_sessions(pg):
    from server.pgwire.server import PgServer

    other = PgServer(pg.adapter, host="127.0.0.1", port=0)
    pg.call(other.start())
    c = RawClient(pg.host, other.port)
    c.startup()
    busy = RawClient(pg.host, other.port)
    busy.startup()
    busy.send(query("subscribe endless"))
    assert busy.read_message()[0] == b"T"
    pg.call(other.close())
    kind, body = c.read_message()
    assert kind == b"E" and error_fields(body)["C"] == "57P01"
    assert c.closed_by_server() and busy.closed_by_server()
    assert c.pid in pg.adapter.closed_sessions and busy.pid in pg.adapter.closed_sessions
    with pytest.raises(OSError):
        socket.create_connection((pg.host, other.port), timeout=1)


def test_adapter_bug_is_an_internal_error_not_a_crash(pg, caplog):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("crash"))
    msgs = c.read_until_ready()
    err = error_fields(msgs[0][1])
    assert err["C"] == "XX000" and "adapter bug" in err["M"]
    c.send(query("select 1"))
    assert kinds(c.read_until_ready()) == [b"T", b"D", b"C", b"Z"]
    assert any(r.name.startswith("server.pgwire") and r.levelname == "ERROR" for r in caplog.records)
    c.close()


def test_copy_out_csv_header_over_the_wire(pg):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("copy (select * from generate(2)) to stdout with (format csv, header)"))
    msgs = c.read_until_ready()
    assert kinds(msgs) == [b"H", b"d", b"d", b"d", b"c", b"C", b"Z"]
    assert msgs[0][1] == struct.pack(">bhhh", 0, 2, 0, 0)
    assert [body for k, body in msgs if k == b"d"] == [b"i,s\n", b"0,row 0\n", b"1,row 1\n"]
    assert msgs[5][1] == b"COPY 2\x00"
    c.close()
