#!/usr/bin/env python3
"""Calls vin.v1.VinDecoderService from Python with the generated stubs.

1. Decode: one VIN, printing its make, model and year.
2. DecodeBatch: a small feed streamed both ways, printing every event
   (queued, retrying, done, failed) as it arrives.
3. An error: Decode of a VIN with a wrong check digit, printing the gRPC
   code and message, and the google.rpc.Status details the server attached
   (trailer grpc-status-details-bin), if any.

Needs Debian's python3-grpcio and python3-protobuf, and the modules that
client/python/generate.sh writes to client/python/gen/ (PYTHONPATH, when
set, is searched first).

Usage: python3 client/python/example.py --target 127.0.0.1:50051
Exit status: 0 when every step behaved as shown, 1 otherwise, 2 when the
server cannot be reached or the generated modules are missing.
"""
import argparse
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
try:
    import grpc
    from google.protobuf import text_format
    from google.rpc import error_details_pb2, status_pb2
    from vin.v1 import vin_pb2, vin_pb2_grpc
except ImportError as e:
    print(f"example.py: {e}: install python3-grpcio and python3-protobuf "
          "(scripts/setup.sh) and run client/python/generate.sh", file=sys.stderr)
    sys.exit(2)

DECODE_VIN = "1FTMW1T88MFA00001"
# The last but one has a wrong check digit (it computes to '3').
FEED = ["1FTMW1T88MFA00001", "1HGCM82633A004352", "1HGCM82643A004352",
        "1G4AH59H45G118341"]
INVALID_VIN = "1HGCM82643A004352"


def vehicle_line(result):
    v = result.vehicle
    source = vin_pb2.Source.Name(result.source)
    return f"{v.make} {v.model} {v.model_year} ({source})"


def decode_one(stub, timeout):
    response = stub.Decode(vin_pb2.DecodeRequest(vin=DECODE_VIN), timeout=timeout)
    print(f"Decode {DECODE_VIN}: {vehicle_line(response.result)}")
    return True


def event_line(event):
    kind = event.WhichOneof("event")
    head = f"  {event.request_id} {event.vin} {kind}"
    if kind == "queued":
        return head + (" (joined a decode in progress)" if event.queued.coalesced else "")
    if kind == "retrying":
        r = event.retrying
        return (f"{head} attempt {r.attempt} failed ({r.error.kind} {r.error.message}),"
                f" next in {r.next_delay.ToTimedelta().total_seconds():.1f}s")
    if kind == "done":
        return f"{head} {vehicle_line(event.done.result)}"
    f = event.failed
    # A program branches on reason_detail (the README lists them), never
    # on the message, which is for people.
    return (f"{head} {vin_pb2.FailureReason.Name(f.reason)} {f.reason_detail}:"
            f" {f.message}")


def stream_feed(stub, timeout):
    requests = (vin_pb2.DecodeBatchRequest(vin=vin) for vin in FEED)
    terminal = {}
    print(f"DecodeBatch of {len(FEED)} VINs:")
    for event in stub.DecodeBatch(requests, timeout=timeout):
        print(event_line(event))
        if event.WhichOneof("event") in ("done", "failed"):
            terminal[event.request_id] = terminal.get(event.request_id, 0) + 1
    done_ok = len(terminal) == len(FEED) and all(n == 1 for n in terminal.values())
    print(f"DecodeBatch: {len(terminal)} of {len(FEED)} items ended"
          f"{'' if done_ok else ' (expected one terminal event per item)'}")
    return done_ok


def status_details(error):
    """The google.rpc.Status of a failed call, or None when none was sent."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    return None


def show_error(stub, timeout):
    try:
        stub.Decode(vin_pb2.DecodeRequest(vin=INVALID_VIN), timeout=timeout)
    except grpc.RpcError as error:
        print(f"Decode {INVALID_VIN}: {error.code().name}: {error.details()}")
        status = status_details(error)
        details = list(status.details) if status else []
        if not details:
            print("  google.rpc.Status details: none attached")
        for any_detail in details:
            name = any_detail.TypeName()
            line = f"  detail {name}"
            known = getattr(error_details_pb2, name.rsplit(".", 1)[-1], None)
            if name.startswith("google.rpc.") and known is not None:
                message = known()
                any_detail.Unpack(message)
                line += ": " + text_format.MessageToString(message, as_one_line=True)
            print(line)
        return error.code() == grpc.StatusCode.INVALID_ARGUMENT
    print(f"Decode {INVALID_VIN}: accepted, but its check digit is wrong")
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port of vin-server")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per call")
    args = parser.parse_args()
    with grpc.insecure_channel(args.target) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=args.timeout)
        except grpc.FutureTimeoutError:
            print(f"example.py: cannot reach {args.target} within {args.timeout:g}s",
                  file=sys.stderr)
            return 2
        stub = vin_pb2_grpc.VinDecoderServiceStub(channel)
        try:
            ok = [decode_one(stub, args.timeout), stream_feed(stub, args.timeout),
                  show_error(stub, args.timeout)]
        except grpc.RpcError as error:
            print(f"example.py: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
