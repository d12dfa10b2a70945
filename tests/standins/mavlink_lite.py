"""The little of MAVLink 2 the firmware stand-ins need: framing with the
CRC (X.25 / MCRF4XX plus the message's CRC_EXTRA) and a stream splitter.
The stand-ins run with the system Python, without pymavlink."""

import struct


def x25(data):
    crc = 0xFFFF
    for b in data:
        tmp = b ^ (crc & 0xFF)
        tmp = (tmp ^ (tmp << 4)) & 0xFF
        crc = ((crc >> 8) ^ (tmp << 8) ^ (tmp << 3) ^ (tmp >> 4)) & 0xFFFF
    return crc


class Framer:
    def __init__(self, sysid=1, compid=1):
        self.seq = 0
        self.sysid = sysid
        self.compid = compid

    def frame(self, msgid, payload, crc_extra):
        p = payload.rstrip(b"\0") or b"\0"
        hdr = bytes([0xFD, len(p), 0, 0, self.seq & 0xFF, self.sysid, self.compid]) + msgid.to_bytes(3, "little")
        self.seq += 1
        crc = x25(hdr[1:] + p + bytes([crc_extra]))
        return hdr + p + crc.to_bytes(2, "little")


def split(buf):
    """(frames as (msgid, payload), rest of the buffer)."""
    out = []
    i = 0
    while i < len(buf):
        if buf[i] == 0xFD and i + 10 <= len(buf):
            n, flags = buf[i + 1], buf[i + 2]
            total = 12 + n + (13 if flags & 1 else 0)
            if i + total > len(buf):
                break
            msgid = int.from_bytes(buf[i + 7:i + 10], "little")
            out.append((msgid, buf[i + 10:i + 10 + n]))
            i += total
        elif buf[i] == 0xFE and i + 6 <= len(buf):
            n = buf[i + 1]
            if i + 8 + n > len(buf):
                break
            out.append((buf[i + 5], buf[i + 6:i + 6 + n]))
            i += 8 + n
        elif buf[i] in (0xFD, 0xFE):
            break
        else:
            i += 1
    return out, buf[i:]


def hil_actuator_controls(framer, time_usec, armed=False):
    payload = struct.pack("<QQ16fB", time_usec, 1, *([0.0] * 16), 128 if armed else 0)
    return framer.frame(93, payload, 47)


def time_usec_of(payload):
    return struct.unpack("<Q", (payload + bytes(8))[:8])[0]
