#!/usr/bin/python3
"""A simulated AT-command voice modem for telwatch's end-to-end tests.

Debian's /usr/bin/python3, standard library only. One process, one thread, one selector loop.

AT side (the daemon under test is the client; every listener accepts any number of connections,
one after another or at the same time):
  --unix PATH         a UNIX stream socket at PATH; "abstract:NAME" for an abstract socket
                      (ModemManager's Test.SetProfile port)
  --tcp PORT          a TCP listener on 127.0.0.1 only (oFono's phonesim plugin); 0 picks a free port
Test side:
  --control PATH      a UNIX stream socket for the test: one command per line, one reply line each
                      ("ok ..." or "error ..."); see CONTROL below
  --log FILE          the whole AT dialogue, one line per command, reply and unsolicited code
When every listener is up it prints one line on stdout and flushes it:
  ready tcp=PORT control=PATH
so a test can wait for it (and learn the TCP port) without polling.

The modem: a registered 3GPP phone (home network 00101 "Telwatch Test", SIM ready, IMSI
001010123456789) with a call list that AT+CLCC reports. Commands are answered as 27.007 says;
unknown commands get ERROR (or +CME ERROR when AT+CMEE asked for it). Unsolicited codes go to
every open connection, once no command has arrived for urc-quiet seconds (see flush()).
Numbers starting with "+" are international (type 145), others 129.

CLCC call states: 0 active, 1 held, 2 dialing, 3 alerting, 4 incoming, 5 waiting.

CONTROL (a call is named by its CLCC index; "last" or nothing means the newest call):
  ring NUMBER [nonumber]  a new incoming call: RING or +CRING: VOICE (AT+CRC), then +CLIP when
                          enabled (NUMBER "-" is withheld: +CLIP with validity 1; "nonumber"
                          leaves +CLIP out: send it later with "clip"). RING repeats every
                          ring-interval seconds while the call is incoming. -> "ok ID"
  clip ID NUMBER          a late +CLIP for a ringing call (sets its number)
  waiting NUMBER          a new waiting call (+CCWA) -> "ok ID"
  alerting [ID]           an outgoing call is ringing at the far end (2 -> 3); nothing unsolicited
  remote-answer [ID]      the far end answers an outgoing call (-> 0 active); nothing unsolicited
  remote-hangup [ID] [silent]
                          the far end ends the call (or the caller gives up on a ringing call);
                          sends NO CARRIER unless "silent"
  busy [ID]               the far end is busy: the outgoing call goes, BUSY is sent
  remote-hold, remote-retrieve
                          the far end holds / retrieves the call: +CSSU: 2 / +CSSU: 3
  urc TEXT                sends TEXT as an unsolicited line to every connection
  calls                   "ok" + the call list as CLCC lines joined by " | "
  connections             "ok N" (open AT connections)
  set KEY VALUE           ring-interval SECONDS (0: ring once), urc-quiet SECONDS (how long
                          the link must be silent before unsolicited codes go out; 0.05),
                          dial-result OK|ERROR|BUSY|NO CARRIER,
                          chup-all true|false (AT+CHUP ends every call, the default, or only the
                          active and held ones),
                          ctfr-result OK|ERROR (AT+CTFR deflects, the default, or is refused:
                          a modem without call deflection),
                          urc-poll SECONDS (0, the default: off): while the daemon polls AT+CLCC
                          at least this often, unsolicited codes wait for its next poll and go
                          out right after it, when the link stays quiet longest
  mark                    "ok N": the number of AT commands received so far
  seen REGEX [SINCE]      "ok N SECONDS COMMAND" for the first AT command (after the first SINCE)
                          matching REGEX: it is the Nth (from 1), SECONDS when it arrived on the
                          monotonic clock (the test's own); "error none" when no command
                          matches: at once, no waiting
  sent-mark               "ok N": the number of unsolicited lines sent so far (to every
                          connection at once: one count a line)
  sent REGEX [SINCE]      "ok N SECONDS LINE" for the first unsolicited line sent (after the first
                          SINCE) matching REGEX: it is the Nth (from 1), SECONDS when it went out
                          on the monotonic clock, just before the write (as `seen`'s); "error
                          none" when none matches yet: at once, no waiting ("drain" first waits
                          for the codes queued for a quiet link): when a ring went out
  drain [TIMEOUT]         replies "ok" once every unsolicited code waiting for a quiet link has gone
                          out (at once when none waits), or "error timeout" after TIMEOUT seconds
                          (default 10): a test's next step then never crosses the last one's codes
  await REGEX [TIMEOUT [SINCE]]
                          replies "ok COMMAND" once a received AT command (after the first SINCE
                          commands) matches REGEX, or "error timeout" after TIMEOUT seconds
                          (default 10); other control commands are served meanwhile
  quit                    exits
"""

import argparse
import re
import selectors
import socket
import sys
import time

ACTIVE, HELD, DIALING, ALERTING, INCOMING, WAITING = range(6)
STATE_NAMES = {ACTIVE: "active", HELD: "held", DIALING: "dialing", ALERTING: "alerting",
               INCOMING: "incoming", WAITING: "waiting"}

MANUFACTURER = "telwatch"
MODEL = "atmodem"
REVISION = "1.0"
IMEI = "356938035643809"
IMSI = "001010123456789"
ICCID = "8900101012345678901"
OWN_NUMBER = "+15550000000"
OPERATOR_NUMERIC = "00101"
OPERATOR_LONG = "Telwatch Test"
OPERATOR_SHORT = "Telwatch"


def swapped_bcd(digits):
    """Digits as the SIM stores them: two per byte, low nibble first, padded with F."""
    if len(digits) % 2:
        digits += "F"
    return bytes.fromhex("".join(digits[i + 1] + digits[i] for i in range(0, len(digits), 2)))


SIM_FILES = {
    0x2FE2: swapped_bcd(ICCID),  # EF_ICCID
    0x6FAD: bytes([0, 0, 0, 2]),  # EF_AD: normal operation, two-digit MNC
    0x6F46: bytes([1]) + OPERATOR_LONG.encode().ljust(16, b"\xff"),  # EF_SPN
}


class Call:
    def __init__(self, index, direction, state, number):
        self.index = index
        self.direction = direction  # 0 mobile originated, 1 mobile terminated
        self.state = state
        self.number = number
        self.multiparty = False
        self.next_ring = None
        self.clip = True  # whether RING is followed by +CLIP (false until a late "clip")

    def number_type(self):
        return 145 if self.number.startswith("+") else 129

    def clcc(self):
        number = "" if self.number == "-" or not self.clip else self.number
        return '+CLCC: %d,%d,%d,0,%d,"%s",%d' % (
            self.index, self.direction, self.state, 1 if self.multiparty else 0, number,
            145 if number.startswith("+") else 129)


class Log:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1, encoding="utf-8") if path else None
        self.start = time.monotonic()

    def write(self, text):
        if self.file:
            self.file.write("%9.3f %s\n" % (time.monotonic() - self.start, text))


class ATConnection:
    def __init__(self, modem, sock, number, echo):
        self.modem = modem
        self.sock = sock
        self.number = number
        self.buffer = b""
        self.echo = echo
        self.verbose = True

    def send_raw(self, data):
        try:
            self.sock.sendall(data)
        except OSError as error:
            self.modem.log.write("[%d] send failed: %s" % (self.number, error))

    def send_lines(self, lines):
        for text in lines:
            self.modem.log.write("[%d] -> %s" % (self.number, text))
        if self.verbose:
            self.send_raw(b"".join(b"\r\n" + text.encode() + b"\r\n" for text in lines))
        else:
            self.send_raw(b"".join(text.encode() + b"\r\n" for text in lines))

    def received(self, data):
        self.buffer += data
        while True:
            # A command line ends with S3 (CR); some senders add LF or end with LF alone.
            match = re.search(rb"[\r\n]", self.buffer)
            if not match:
                if len(self.buffer) > 4096:
                    self.modem.log.write("[%d] dropped %d bytes without a line end" % (self.number, len(self.buffer)))
                    self.buffer = b""
                return
            line = self.buffer[:match.start()]
            self.buffer = self.buffer[match.end():]
            if not line.strip():
                continue
            text = line.decode("latin-1")
            if self.echo:
                self.send_raw(line + b"\r")
            self.modem.command(self, text.strip())


class Modem:
    def __init__(self, log):
        self.log = log
        self.connections = []
        self.calls = []
        self.history = []  # every AT command line received, in order
        self.history_times = []  # when each arrived (time.monotonic())
        self.sent = []  # every unsolicited line sent, in order (a benchmark's ring time)
        self.sent_times = []  # when each went out (time.monotonic(), just before the writes)
        self.waiters = []  # (control connection, regex, deadline, since)
        self.drainers = []  # (control connection, deadline): "drain" waiting for self.pending to empty
        self.settings = {"ring-interval": 3.0, "dial-result": "OK",
                         "chup-all": "true", "urc-quiet": 0.05, "urc-poll": 0, "ctfr-result": "OK"}
        self.pending = []  # unsolicited lines waiting for a quiet link, in order
        self.pending_since = 0.0
        self.last_command = 0.0
        self.last_poll = None  # when the last AT+CLCC arrived
        # Modem-wide settings (one modem, whatever connection set them).
        self.cmee = 0
        self.crc = 0
        self.clip = 0
        self.ccwa = 0
        self.colp = 0
        self.cssn = (0, 0)
        self.creg = 0
        self.cgreg = 0
        self.cereg = 0
        self.cfun = 1
        self.cops_format = 0
        self.cscs = "IRA"
        self.cmer = ""

    # ----- unsolicited codes -----

    def unsolicited(self, *lines, ringing=None):
        """Sends lines (one write per connection) to every connection once the link is quiet.

        NO CARRIER and BUSY are final result codes too: one that crosses a command in flight is
        taken by the daemon as that command's result and never seen as the end of a call. So
        unsolicited codes wait until no command has arrived for urc-quiet seconds (a real modem
        would interleave them; this one keeps tests deterministic), and go out in order.
        `ringing` is the call a RING, +CLIP or +CCWA announces: if it has been answered or has
        ended by the time the link is quiet, the lines are dropped, as a real modem never rings
        for a call that is no longer ringing (the daemon would take it for a new call).
        """
        if not self.pending:
            self.pending_since = time.monotonic()
        self.pending.append((lines, ringing))
        self.flush()

    def poll_due(self):
        """When the daemon's next AT+CLCC is due, while it polls (urc-poll) and has not polled
        since the waiting codes were queued: a poll sent as they go out would cross them (oFono
        takes a NO CARRIER that crosses its AT+CLCC as the poll's error and gives up on its calls,
        docs/modem-stacks.md §6.2). None when the codes need not wait for a poll."""
        period = float(self.settings["urc-poll"])
        if period <= 0 or self.last_poll is None or self.last_poll >= self.pending_since:
            return None
        # The next poll is expected a period after the last: the codes wait for it (sent as it is
        # due, they would cross it), up to a second period, in case the daemon stopped polling.
        due = self.last_poll + 2 * period
        return due if time.monotonic() < due else None

    def flush(self):
        if not self.pending:
            return
        quiet = float(self.settings["urc-quiet"])
        if time.monotonic() - self.last_command < quiet:
            self.log.write("[*] URC waits for a quiet link: %s" % " / ".join(self.pending[-1][0]))
            return
        if self.poll_due() is not None:
            self.log.write("[*] URC waits for the next poll: %s" % " / ".join(self.pending[-1][0]))
            return
        for lines, ringing in self.pending:
            if ringing is not None and (ringing not in self.calls or ringing.state not in (INCOMING, WAITING)):
                self.log.write("[*] URC dropped, its call is no longer ringing: %s" % " / ".join(lines))
                continue
            self.log.write("[*] URC %s" % " / ".join(lines))
            now = time.monotonic()
            self.sent += lines
            self.sent_times += [now] * len(lines)
            for connection in list(self.connections):
                connection.send_lines(list(lines))
        self.pending = []
        for control, _ in self.drainers:
            control.reply("ok")
        self.drainers = []

    def ring(self, call):
        lines = ["+CRING: VOICE" if self.crc else "RING"]
        if self.clip and call.number is not None and call.clip:
            if call.number == "-":
                lines.append('+CLIP: "",128,,,,1')
            else:
                lines.append('+CLIP: "%s",%d' % (call.number, call.number_type()))
        self.unsolicited(*lines, ringing=call)
        interval = float(self.settings["ring-interval"])
        call.next_ring = time.monotonic() + interval if interval > 0 else None

    def tick(self):
        now = time.monotonic()
        for call in list(self.calls):
            if call.state == INCOMING and call.next_ring is not None and now >= call.next_ring:
                self.ring(call)
        self.flush()
        for waiter in list(self.waiters):
            if now >= waiter[2]:
                self.waiters.remove(waiter)
                waiter[0].reply("error timeout waiting for %s" % waiter[1].pattern)
        for drainer in list(self.drainers):
            if now >= drainer[1]:
                self.drainers.remove(drainer)
                drainer[0].reply("error timeout: unsolicited codes still wait for a quiet link")

    def next_deadline(self):
        times = [c.next_ring for c in self.calls if c.state == INCOMING and c.next_ring is not None]
        times += [w[2] for w in self.waiters] + [d[1] for d in self.drainers]
        if self.pending:
            # Only a quiet deadline still to come: one past, while the codes wait for a poll, would
            # make the loop spin until the poll.
            quiet = self.last_command + float(self.settings["urc-quiet"])
            if quiet > time.monotonic():
                times.append(quiet)
            due = self.poll_due()
            if due is not None:
                times.append(due)
        return min(times) if times else None

    # ----- calls -----

    def new_index(self):
        used = {c.index for c in self.calls}
        for index in range(1, 8):
            if index not in used:
                return index
        return None

    def find(self, spec):
        if spec in (None, "", "last"):
            return self.calls[-1] if self.calls else None
        for call in self.calls:
            if str(call.index) == spec:
                return call
        return None

    def remove(self, call):
        if call in self.calls:
            self.calls.remove(call)
        if sum(1 for c in self.calls if c.multiparty) < 2:
            for c in self.calls:
                c.multiparty = False

    def promote_waiting(self):
        """After a call ends: a waiting call with nothing else live becomes an incoming call."""
        if any(c.state in (ACTIVE, HELD, DIALING, ALERTING) for c in self.calls):
            return
        for call in self.calls:
            if call.state == WAITING:
                call.state = INCOMING
                self.ring(call)
                return

    # ----- AT commands -----

    def command(self, connection, line):
        self.log.write("[%d] <- %s" % (connection.number, line))
        self.history.append(line)
        self.last_command = time.monotonic()
        self.history_times.append(self.last_command)
        if line.upper() == "AT+CLCC":
            self.last_poll = self.last_command
        for waiter in list(self.waiters):
            control, pattern, _, since = waiter
            if len(self.history) > since and pattern.search(line):
                self.waiters.remove(waiter)
                control.reply("ok " + line)
        upper = line.upper()
        if not upper.startswith("AT"):
            connection.send_lines([self.error()])
            return
        body = line[2:]
        responses = []
        result = "OK"
        position = 0
        while position < len(body):
            char = body[position]
            if char in " ;":
                position += 1
                continue
            if char.upper() == "D":
                outcome = self.dial(body[position + 1:], responses)
                result = outcome
                position = len(body)
                break
            if char in "+*^$%#":
                match = re.match(r'[+*^$%#][A-Za-z0-9]+', body[position:])
                name = match.group(0).upper()
                position += len(match.group(0))
                rest_match = re.match(r'(=\?|\?|=(?:"[^"]*"|[^;"])*)?', body[position:])
                suffix = rest_match.group(0) or ""
                position += len(suffix)
                outcome = self.extended(connection, name, suffix, responses)
            else:
                match = re.match(r'(&?[A-Za-z])(\d*)(\?|=\d*)?', body[position:])
                if not match:
                    outcome = self.error()
                    position = len(body)
                else:
                    position += len(match.group(0))
                    outcome = self.basic(connection, match.group(1).upper(), match.group(2),
                                         match.group(3), responses)
            if outcome != "OK":
                result = outcome
                break
        # One write per command line: a reply split over several TCP segments waits on Nagle and
        # delayed ACKs (about 40 ms a command).
        connection.send_lines(responses + [result])

    def error(self, code=100):
        if self.cmee == 1:
            return "+CME ERROR: %d" % code
        if self.cmee == 2:
            texts = {3: "operation not allowed", 4: "operation not supported", 21: "invalid index",
                     30: "no network service", 100: "unknown"}
            return "+CME ERROR: %s" % texts.get(code, "unknown")
        return "ERROR"

    def basic(self, connection, name, digits, suffix, responses):
        value = int(digits) if digits else 0
        if name == "E":
            connection.echo = value == 1
            return "OK"
        if name == "V":
            connection.verbose = value != 0
            return "OK"
        if name in ("Q", "X", "L", "M", "&C", "&D", "&F", "&W", "&K", "&S"):
            return "OK"
        if name == "Z":
            connection.echo = True
            connection.verbose = True
            return "OK"
        if name == "S":
            if suffix == "?":
                responses.append("%03d" % {0: 0, 3: 13, 4: 10, 5: 8, 7: 50}.get(value, 0))
            return "OK"
        if name == "I":
            responses.extend([MANUFACTURER, MODEL, "Revision: " + REVISION])
            return "OK"
        if name == "A":
            for call in self.calls:
                if call.state == INCOMING:
                    call.state = ACTIVE
                    call.next_ring = None
                    return "OK"
            return "NO CARRIER"
        if name == "H":
            self.hangup_all(include_waiting=False)
            return "OK"
        return self.error(4)

    def dial(self, rest, responses):
        number = rest.strip()
        if not number.endswith(";"):
            return "NO CARRIER"  # data calls are not simulated
        number = number[:-1].strip().strip('"')
        if not number or number.startswith(">") or self.cfun != 1:
            return self.error(3)
        result = self.settings["dial-result"]
        if result != "OK":
            return result
        if any(c.state in (DIALING, ALERTING) for c in self.calls):
            return self.error(3)
        index = self.new_index()
        if index is None:
            return self.error(3)
        for call in self.calls:
            if call.state == ACTIVE:
                call.state = HELD
        self.calls.append(Call(index, 0, DIALING, number))
        return "OK"

    def hangup_all(self, include_waiting):
        for call in list(self.calls):
            if include_waiting or call.state != WAITING:
                self.remove(call)
        self.promote_waiting()

    def chld(self, argument):
        if argument == "":
            return self.error(3)
        operation = argument[0]
        target = int(argument[1:]) if len(argument) > 1 and argument[1:].isdigit() else None
        active = [c for c in self.calls if c.state == ACTIVE]
        held = [c for c in self.calls if c.state == HELD]
        waiting = [c for c in self.calls if c.state in (WAITING, INCOMING)]
        if operation == "0":
            # Release held calls, or reject the waiting call (UDUB).
            if waiting:
                self.remove(waiting[0])
            else:
                for call in held:
                    self.remove(call)
            return "OK"
        if operation == "1":
            if target is not None:
                call = self.find(str(target))
                if call is None:
                    return self.error(21)
                self.remove(call)
                self.promote_waiting()
                return "OK"
            for call in active:
                self.remove(call)
            if waiting:
                waiting[0].state = ACTIVE
                waiting[0].next_ring = None
            else:
                for call in held:
                    call.state = ACTIVE
            return "OK"
        if operation == "2":
            if target is not None:
                # Private call with one party of a multiparty call: the others go on hold.
                call = self.find(str(target))
                if call is None or call.state != ACTIVE:
                    return self.error(3)
                for other in active:
                    if other is not call:
                        other.state = HELD
                return "OK"
            for call in active:
                call.state = HELD
            if waiting:
                waiting[0].state = ACTIVE
                waiting[0].next_ring = None
            else:
                for call in held:
                    call.state = ACTIVE
            return "OK"
        if operation == "3":
            if not active or not held:
                return self.error(3)
            for call in active + held:
                call.state = ACTIVE
                call.multiparty = True
            return "OK"
        if operation == "4":
            if not active or not held:
                return self.error(3)
            for call in active + held:
                self.remove(call)
            return "OK"
        return self.error(4)

    def extended(self, connection, name, suffix, responses):
        test = suffix == "=?"
        read = suffix == "?"
        argument = suffix[1:] if suffix.startswith("=") and not test else None
        arguments = [a.strip().strip('"') for a in argument.split(",")] if argument is not None else []

        def int_arg(position, default=0):
            try:
                return int(arguments[position])
            except (IndexError, ValueError):
                return default

        if name in ("+CGMI", "+GMI"):
            responses.append(MANUFACTURER)
            return "OK"
        if name in ("+CGMM", "+GMM"):
            responses.append(MODEL)
            return "OK"
        if name in ("+CGMR", "+GMR"):
            responses.append(REVISION)
            return "OK"
        if name in ("+CGSN", "+GSN"):
            if not test:
                responses.append(IMEI)
            return "OK"
        if name == "+GCAP":
            responses.append("+GCAP: +CGSM")
            return "OK"
        if name == "+WS46":
            if test:
                responses.append("+WS46: (12)")
            elif read:
                responses.append("+WS46: 12")
            return "OK"
        if name == "+CPIN":
            if read:
                responses.append("+CPIN: READY")
                return "OK"
            return self.error(3) if not test else "OK"
        if name == "+CIMI":
            responses.append(IMSI)
            return "OK"
        if name in ("+CCID", "+ICCID"):
            responses.append("%s: %s" % (name, ICCID))
            return "OK"
        if name == "+CNUM":
            if not test:
                responses.append('+CNUM: "","%s",145' % OWN_NUMBER)
            return "OK"
        if name == "+CFUN":
            if test:
                responses.append("+CFUN: (0,1,4),(0,1)")
            elif read:
                responses.append("+CFUN: %d" % self.cfun)
            elif argument is not None:
                self.cfun = int_arg(0, 1)
                if self.cfun != 1:
                    self.calls = []
            return "OK"
        if name == "+CMEE":
            if test:
                responses.append("+CMEE: (0-2)")
            elif read:
                responses.append("+CMEE: %d" % self.cmee)
            else:
                self.cmee = int_arg(0)
            return "OK"
        if name in ("+CREG", "+CGREG", "+CEREG"):
            attribute = name[1:].lower()
            if test:
                responses.append("%s: (0-2)" % name)
            elif read:
                mode = getattr(self, attribute)
                registered = 1 if self.cfun == 1 else 0
                if mode == 2 and registered:
                    tech = 7 if name == "+CEREG" else 0
                    responses.append('%s: %d,%d,"0001","00000101",%d' % (name, mode, registered, tech))
                else:
                    responses.append("%s: %d,%d" % (name, mode, registered))
            else:
                setattr(self, attribute, int_arg(0))
            return "OK"
        if name == "+COPS":
            if test:
                responses.append('+COPS: (2,"%s","%s","%s",0),,(0-4),(0-2)'
                                 % (OPERATOR_LONG, OPERATOR_SHORT, OPERATOR_NUMERIC))
            elif read:
                if self.cfun != 1:
                    responses.append("+COPS: 0")
                else:
                    names = {0: OPERATOR_LONG, 1: OPERATOR_SHORT, 2: OPERATOR_NUMERIC}
                    responses.append('+COPS: 0,%d,"%s",0' % (self.cops_format, names.get(self.cops_format, OPERATOR_LONG)))
            elif argument is not None:
                if int_arg(0) == 3:
                    self.cops_format = int_arg(1)
            return "OK"
        if name == "+CSQ":
            if not test:
                responses.append("+CSQ: 20,99")
            return "OK"
        if name == "+CIND":
            if test:
                responses.append('+CIND: ("battchg",(0-5)),("signal",(0-5)),("service",(0-1)),'
                                 '("call",(0,1)),("roam",(0-1)),("callsetup",(0-3))')
            elif read:
                call = 1 if any(c.state in (ACTIVE, HELD) for c in self.calls) else 0
                responses.append("+CIND: 5,4,1,%d,0,0" % call)
            return "OK"
        if name == "+CMER":
            if read:
                responses.append("+CMER: 0,0,0,0,0")
            elif test:
                responses.append("+CMER: (0-3),(0),(0),(0-2),(0-1)")
            return "OK"
        if name == "+CLCC":
            if not test:
                responses.extend(call.clcc() for call in sorted(self.calls, key=lambda c: c.index))
            return "OK"
        if name in ("+CLIP", "+CRC", "+CCWA", "+COLP", "+CLIR", "+CSSN", "+CVHU", "+CDIP", "+CNAP"):
            key = name[1:].lower()
            if test:
                responses.append("%s: (0,1)" % name)
                return "OK"
            if read:
                if name == "+CLIR":
                    responses.append("+CLIR: 0,4")
                elif name == "+CLIP":
                    responses.append("+CLIP: %d,1" % self.clip)
                elif name == "+CCWA":
                    responses.append("+CCWA: %d" % self.ccwa)
                elif name == "+COLP":
                    responses.append("+COLP: %d,1" % self.colp)
                elif name == "+CRC":
                    responses.append("+CRC: %d" % self.crc)
                else:
                    responses.append("%s: 0" % name)
                return "OK"
            if name == "+CCWA" and int_arg(1, -1) == 2:
                # Query: call waiting active for voice.
                responses.append("+CCWA: 1,1")
            if hasattr(self, key):
                setattr(self, key, int_arg(0) if key != "cssn" else (int_arg(0), int_arg(1)))
            return "OK"
        if name == "+CHUP":
            if test:
                return "OK"
            if self.settings["chup-all"] == "true":
                self.hangup_all(include_waiting=True)
            else:
                for call in list(self.calls):
                    if call.state in (ACTIVE, HELD, DIALING, ALERTING, INCOMING):
                        self.remove(call)
                self.promote_waiting()
            return "OK"
        if name == "+CHLD":
            if test:
                responses.append("+CHLD: (0,1,1x,2,2x,3,4)")
                return "OK"
            if read:
                return self.error(4)
            return self.chld(argument.strip() if argument is not None else "")
        if name == "+VTS":
            return "OK"
        if name == "+CTFR":
            # Call deflection (27.007 7.14): the incoming or waiting call leaves, unanswered.
            if test:
                return "OK"
            if self.settings["ctfr-result"] != "OK":
                # A modem (or network) without call deflection: operation not supported.
                return self.error(4)
            for state in (INCOMING, WAITING):
                for call in self.calls:
                    if call.state == state and arguments and arguments[0]:
                        self.remove(call)
                        self.promote_waiting()
                        return "OK"
            return self.error(3)
        if name == "+CSCS":
            if test:
                responses.append('+CSCS: ("IRA","GSM","UCS2")')
            elif read:
                responses.append('+CSCS: "%s"' % self.cscs)
            elif arguments:
                self.cscs = arguments[0]
            return "OK"
        if name in ("+CLVL", "+CMUT"):
            if test:
                responses.append("%s: (0-1)" % name if name == "+CMUT" else "+CLVL: (0-5)")
            elif read:
                responses.append("%s: %d" % (name, 0 if name == "+CMUT" else 3))
            return "OK"
        if name == "+CGATT":
            if read:
                responses.append("+CGATT: 1")
            elif test:
                responses.append("+CGATT: (0,1)")
            return "OK"
        if name == "+CGDCONT":
            if test:
                responses.append('+CGDCONT: (1-4),"IP",,,(0),(0)')
            return "OK"
        if name == "+CGACT":
            if test:
                responses.append("+CGACT: (0,1)")
            return "OK"
        if name == "+CTZU" or name == "+CTZR":
            if test:
                responses.append("%s: (0,1)" % name)
            elif read:
                responses.append("%s: 0" % name)
            return "OK"
        if name == "+CMOD":
            if read:
                responses.append("+CMOD: 0")
            return "OK"
        if name == "+CBST":
            if read:
                responses.append("+CBST: 0,0,1")
            return "OK"
        if name == "+CRSM":
            if test:
                return "OK"
            return self.sim_access(int_arg(0), int_arg(1), responses)
        if name == "+CSTA":
            if read:
                responses.append("+CSTA: 145")
            return "OK"
        return self.error(4)

    def sim_access(self, command, file_id, responses):
        """AT+CRSM on a few elementary files (transparent, readable always); others are not found."""
        content = SIM_FILES.get(file_id)
        if content is None:
            responses.append("+CRSM: 106,130")  # 6A82: file not found
            return "OK"
        if command == 176:  # READ BINARY
            responses.append('+CRSM: 144,0,"%s"' % content.hex().upper())
        elif command == 192:  # GET RESPONSE, 2G format: size, id, EF, access ALW, transparent
            header = bytes([0, 0, len(content) >> 8, len(content) & 0xFF, file_id >> 8, file_id & 0xFF,
                            0x04, 0x00, 0x00, 0xFF, 0x44, 0x01, 0x02, 0x00, 0x00])
            responses.append('+CRSM: 144,0,"%s"' % header.hex().upper())
        else:
            responses.append("+CRSM: 109,0")  # 6D00: instruction not supported
        return "OK"

    # ----- the test's commands -----

    def control(self, words):
        if not words:
            return "error empty command"
        verb, args = words[0], words[1:]
        if verb == "ring":
            if not args:
                return "error ring NUMBER"
            index = self.new_index()
            if index is None:
                return "error no free call index"
            call = Call(index, 1, INCOMING, args[0])
            call.clip = not (len(args) > 1 and args[1] == "nonumber")
            self.calls.append(call)
            self.ring(call)
            return "ok %d" % index
        if verb == "clip":
            call = self.find(args[0] if args else None)
            if call is None or len(args) < 2:
                return "error clip ID NUMBER"
            call.number = args[1]
            call.clip = True
            self.unsolicited('+CLIP: "%s",%d' % (call.number, call.number_type()), ringing=call)
            return "ok"
        if verb == "waiting":
            if not args:
                return "error waiting NUMBER"
            index = self.new_index()
            if index is None:
                return "error no free call index"
            call = Call(index, 1, WAITING, args[0])
            self.calls.append(call)
            self.unsolicited('+CCWA: "%s",%d,1' % (call.number, call.number_type()), ringing=call)
            return "ok %d" % index
        if verb in ("alerting", "remote-answer", "busy"):
            call = self.find(args[0] if args else None)
            if call is None or call.direction != 0 or call.state not in (DIALING, ALERTING):
                return "error no outgoing call being set up"
            if verb == "alerting":
                call.state = ALERTING
            elif verb == "remote-answer":
                call.state = ACTIVE
            else:
                self.remove(call)
                self.unsolicited("BUSY")
            return "ok %d" % call.index
        if verb == "remote-hangup":
            call = self.find(args[0] if args else None)
            if call is None:
                return "error no such call"
            self.remove(call)
            if "silent" not in args:
                self.unsolicited("NO CARRIER")
            self.promote_waiting()
            return "ok %d" % call.index
        if verb in ("remote-hold", "remote-retrieve"):
            self.unsolicited("+CSSU: %d" % (2 if verb == "remote-hold" else 3))
            return "ok"
        if verb == "urc":
            self.unsolicited(" ".join(args))
            return "ok"
        if verb == "calls":
            return "ok " + " | ".join(c.clcc() for c in sorted(self.calls, key=lambda c: c.index))
        if verb == "connections":
            return "ok %d" % len(self.connections)
        if verb == "set":
            if len(args) < 2 or args[0] not in self.settings:
                return "error set KEY VALUE (%s)" % ", ".join(sorted(self.settings))
            self.settings[args[0]] = " ".join(args[1:])
            return "ok"
        if verb == "mark":
            return "ok %d" % len(self.history)
        if verb == "seen":
            if not args:
                return "error seen REGEX [SINCE]"
            pattern = re.compile(args[0])
            since = int(args[1]) if len(args) > 1 else 0
            for number in range(since, len(self.history)):
                if pattern.search(self.history[number]):
                    return "ok %d %.6f %s" % (number + 1, self.history_times[number], self.history[number])
            return "error none"
        if verb == "sent-mark":
            return "ok %d" % len(self.sent)
        if verb == "sent":
            if not args:
                return "error sent REGEX [SINCE]"
            try:
                pattern = re.compile(args[0])
                since = int(args[1]) if len(args) > 1 else 0
            except (re.error, ValueError) as error:
                return "error %s" % error
            for number in range(since, len(self.sent)):
                if pattern.search(self.sent[number]):
                    return "ok %d %.6f %s" % (number + 1, self.sent_times[number], self.sent[number])
            return "error none"
        return "error unknown command %s" % verb


class ControlConnection:
    def __init__(self, server, sock):
        self.server = server
        self.sock = sock
        self.buffer = b""

    def reply(self, text):
        self.server.modem.log.write("[control] %s" % text)
        try:
            self.sock.sendall(text.encode() + b"\n")
        except OSError:
            pass

    def received(self, data):
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            self.server.modem.log.write("[control] %s" % text)
            words = text.split()
            if words[0] == "quit":
                self.reply("ok")
                sys.exit(0)
            if words[0] == "drain":
                try:
                    timeout = float(words[1]) if len(words) > 1 else 10.0
                except ValueError as error:
                    self.reply("error %s" % error)
                    continue
                if self.server.modem.pending:
                    self.server.modem.drainers.append((self, time.monotonic() + timeout))
                else:
                    self.reply("ok")
                continue
            if words[0] == "await":
                if len(words) < 2:
                    self.reply("error await REGEX [TIMEOUT [SINCE]]")
                    continue
                try:
                    pattern = re.compile(words[1])
                    timeout = float(words[2]) if len(words) > 2 else 10.0
                    since = int(words[3]) if len(words) > 3 else 0
                except (re.error, ValueError) as error:
                    self.reply("error %s" % error)
                    continue
                history = self.server.modem.history
                found = next((h for h in history[since:] if pattern.search(h)), None)
                if found is not None:
                    self.reply("ok " + found)
                else:
                    self.server.modem.waiters.append((self, pattern, time.monotonic() + timeout, since))
                continue
            self.reply(self.server.modem.control(words))


class Server:
    def __init__(self, arguments):
        self.modem = Modem(Log(arguments.log))
        self.selector = selectors.DefaultSelector()
        self.next_number = 1
        ready = ["ready"]
        for spec in arguments.unix:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address = "\0" + spec[len("abstract:"):] if spec.startswith("abstract:") else spec
            sock.bind(address)
            sock.listen(8)
            self.selector.register(sock, selectors.EVENT_READ, ("listen-at", spec))
        if arguments.tcp is not None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", arguments.tcp))
            sock.listen(8)
            self.selector.register(sock, selectors.EVENT_READ, ("listen-at", "tcp"))
            ready.append("tcp=%d" % sock.getsockname()[1])
        if arguments.control:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(arguments.control)
            sock.listen(4)
            self.selector.register(sock, selectors.EVENT_READ, ("listen-control", arguments.control))
            ready.append("control=%s" % arguments.control)
        self.modem.log.write("started: " + " ".join(ready[1:]))
        print(" ".join(ready), flush=True)

    def run(self):
        while True:
            deadline = self.modem.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            for key, _ in self.selector.select(timeout):
                kind, data = key.data
                if kind == "listen-at":
                    sock, _ = key.fileobj.accept()
                    if sock.family == socket.AF_INET:
                        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    # Echo starts on as V.250 says, except on TCP: phonesim, which oFono's
                    # phonesim plugin expects there, starts with it off (the plugin sends no ATE0).
                    connection = ATConnection(self.modem, sock, self.next_number,
                                              echo=sock.family != socket.AF_INET)
                    self.next_number += 1
                    self.modem.connections.append(connection)
                    self.modem.log.write("[%d] connected (%s)" % (connection.number, data))
                    self.selector.register(sock, selectors.EVENT_READ, ("at", connection))
                elif kind == "listen-control":
                    sock, _ = key.fileobj.accept()
                    self.selector.register(sock, selectors.EVENT_READ, ("control", ControlConnection(self, sock)))
                else:
                    try:
                        chunk = key.fileobj.recv(65536)
                    except OSError:
                        chunk = b""
                    if chunk:
                        data.received(chunk)
                        continue
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    if kind == "at":
                        self.modem.connections.remove(data)
                        self.modem.log.write("[%d] closed" % data.number)
                    else:
                        self.modem.waiters = [w for w in self.modem.waiters if w[0] is not data]
                        self.modem.drainers = [d for d in self.modem.drainers if d[0] is not data]
            self.modem.tick()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--unix", action="append", default=[], help="PATH or abstract:NAME")
    parser.add_argument("--tcp", type=int, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--control", help="UNIX socket path for the test's commands")
    parser.add_argument("--log", help="file for the AT dialogue")
    arguments = parser.parse_args()
    if not arguments.unix and arguments.tcp is None:
        parser.error("give --unix and/or --tcp")
    try:
        Server(arguments).run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
