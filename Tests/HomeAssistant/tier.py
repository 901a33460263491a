#!/usr/bin/python3
"""The Home Assistant tier: telwatch's MQTT export as a Home Assistant user sees it.

A real Home Assistant (from PyPI, in a Debian 13 root: scripts/debian-root, kind homeassistant)
on 127.0.0.1, Debian's mosquitto on 127.0.0.1, and telwatch following its own simulator
(`telwatch simulate`) on a private bus. Home Assistant is set up through its own API
(onboarding, then the MQTT integration's config flow), and everything is read back through
it: the device, each entity's id, class and state through each scenario, and the automations of
docs/mqtt.md (their triggers as written, added once MQTT is set up, as a user would), which must
fire exactly once per real event, never on a restart of telwatch or of Home Assistant, and again
after Home Assistant's restart. The Reject and Silence buttons (`--mqtt-commands`) are unavailable
while no call rings and available while one does, and pressing them in Home Assistant silences
and hangs up the ringing call in telwatch's stream. Home Assistant's own log (its stderr, both runs) must hold no
warning about MQTT or telwatch; a canary entity's warning shows that check sees what it logs.
Every wait is bounded; every process is started here and killed by its PID. Prints one line per
check and a summary: "homeassistant: N passed, M failed".
"""
import json, os, re, shutil, urllib.parse, signal, socket, subprocess, sys, tempfile, time, urllib.request, urllib.error

ROOT_NAME = "trixie-amd64-homeassistant"
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
telwatch = sys.argv[1]
passed = failed = 0
processes = []
started_at = time.monotonic()


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok   {what}")
    else:
        failed += 1
        print(f"  FAIL {what}" + (f": {detail}" if detail else ""))
    sys.stdout.flush()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, name, **kw):
    log = open(os.path.join(work, name + ".log"), "ab")
    p = subprocess.Popen(args, stdout=kw.pop("stdout", log), stderr=log, **kw)
    p.name = name
    processes.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=20):
    if p.poll() is None:
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
    if p in processes:
        processes.remove(p)


def until(condition, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


work = tempfile.mkdtemp(prefix="telwatch-ha-")
config = os.path.join(work, "config")
os.makedirs(os.path.join(config, ".storage"))
broker_port, ha_port = free_port(), free_port()
base = f"http://127.0.0.1:{ha_port}"
host = "phone"
node = "telwatch_" + host
token = None


def api(method, path, body=None, form=None, timeout=10):
    headers = {}
    data = None
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def states():
    return {s["entity_id"]: s for s in api("GET", "/api/states")}


# --- Home Assistant's configuration: only what MQTT, the API and automations need, nothing that goes online.
mqtt_doc = open(os.path.join(repo, "docs", "mqtt.md")).read()
automations_yaml = re.search(r"```yaml\n# automations.yaml\n(.*?)```", mqtt_doc, re.S).group(1)
# The triggers exactly as docs/mqtt.md writes them; each action counts into a counter of its own
# (its media player does not exist here).
names = re.findall(r'- alias: "(.*?)"', automations_yaml)
counted = []
for index, block in enumerate(re.split(r"\n(?=- alias:)", automations_yaml.strip())):
    triggers = block.split("  actions:")[0]
    counted.append(triggers + f"  actions:\n    - action: counter.increment\n      target:\n        entity_id: counter.fired_{index}\n")
# None at the start: Home Assistant attaches an MQTT trigger when it loads the automation, and
# a reload passes over automations that did not change, so one loaded before the MQTT integration
# was set up would never hear its topic until the next start. They are written after MQTT's setup.
automations_path = os.path.join(config, "automations.yaml")
open(automations_path, "w").write("[]\n")
open(os.path.join(config, "configuration.yaml"), "w").write(f"""
homeassistant:
  name: telwatch tier
  latitude: 0
  longitude: 0
  elevation: 0
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: DE
  language: en
http:
  server_host: 127.0.0.1
  server_port: {ha_port}
api:
automation: !include automations.yaml
counter:
""" + "".join(f"  fired_{i}:\n" for i in range(len(counted))) + """
logger:
  default: warning
""")
# Onboarding's other steps are done: its core-config step sets up integrations that go online.
json.dump({"version": 4, "minor_version": 1, "key": "onboarding",
           "data": {"done": ["core_config", "analytics", "integration"]}},
          open(os.path.join(config, ".storage", "onboarding"), "w"))

mosquitto_conf = os.path.join(work, "mosquitto.conf")
open(mosquitto_conf, "w").write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
broker = start(["mosquitto", "-c", mosquitto_conf], "mosquitto")


def start_ha():
    return start([os.path.join(repo, "scripts/debian-root"), "run", ROOT_NAME, "/opt/homeassistant/bin/hass",
                  "-c", config, "--skip-pip"], "homeassistant")


def ha_up():
    # Before onboarding its own endpoint answers; after it (a restart), the API with the token.
    try:
        return api("GET", "/api/" if token else "/api/onboarding", timeout=2) is not None
    except Exception:
        return False


def ha_log():
    # Its stderr, kept over its restart (config/home-assistant.log holds only the current run).
    try:
        return open(os.path.join(work, "homeassistant.log"), errors="replace").read()
    except OSError:
        return ""


def ha_warnings():
    return [l for l in ha_log().splitlines() if re.search(r"(WARNING|ERROR).*(mqtt|telwatch)", l, re.I)]


try:
    t = time.monotonic()
    failed += 1  # taken back at the end: an exception on the way is a failure
    ha = start_ha()
    check(until(ha_up, 240, 0.5), "Home Assistant answers on 127.0.0.1", ha_log()[-2000:])
    print(f"  (Home Assistant ready in {time.monotonic() - t:.1f} s)")
    client = base + "/"
    code = api("POST", "/api/onboarding/users", {"client_id": client, "name": "tier", "username": "tier",
                                                  "password": "telwatch-tier", "language": "en"})["auth_code"]
    token = api("POST", "/auth/token", form={"grant_type": "authorization_code", "code": code,
                                              "client_id": client})["access_token"]
    flow = api("POST", "/api/config/config_entries/flow", {"handler": "mqtt"})
    if flow.get("type") == "menu":
        flow = api("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"next_step_id": "broker"})
    entry = api("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"broker": "127.0.0.1",
                                                                              "port": broker_port})
    check(entry.get("type") == "create_entry", "the MQTT integration is set up", str(entry))
    mqtt_loaded = lambda: any(e["domain"] == "mqtt" and e["state"] == "loaded"
                              for e in api("GET", "/api/config/config_entries/entry"))
    check(until(mqtt_loaded, 30, 0.1), "the MQTT integration is loaded")
    # As a user adds them once MQTT is set up: docs/mqtt.md's automations, then a reload.
    open(automations_path, "w").write("\n".join(counted))
    api("POST", "/api/services/automation/reload", {})
    check(until(lambda: sum(k.startswith("automation.") for k in states()) == len(counted), 20),
          f"docs/mqtt.md's {len(counted)} automations are loaded", str([k for k in states() if k.startswith("automation.")]))

    # --- telwatch on a private bus with its simulator
    bus_conf = os.path.join(work, "bus.conf")
    bus_path = os.path.join(work, "bus")
    open(bus_conf, "w").write(f"""<busconfig><type>session</type><listen>unix:path={bus_path}</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>""")
    bus = start(["dbus-daemon", "--config-file", bus_conf, "--nofork"], "dbus")
    until(lambda: os.path.exists(bus_path), 10)
    address = "unix:path=" + bus_path
    simulator = start([telwatch, "simulate", "--bus", address, "-"], "simulate", stdin=subprocess.PIPE)
    state_dir = os.path.join(work, "state")
    os.makedirs(state_dir)
    conf = os.path.join(work, "telwatch.conf")

    rules = os.path.join(work, "screening.conf")
    open(rules, "w").write("block +1900*\n")

    def write_conf(extra=""):
        open(conf, "w").write(f"mqtt = mqtt://127.0.0.1:{broker_port}\nmqtt-topic = telwatch/{host}\n"
                              f"mqtt-reconnect-max = 1\nscreening = {rules}\nmqtt-commands = true\n{extra}")

    write_conf()
    lines = []

    def start_watch():
        # The host's name is docs/mqtt.md's, in a UTS namespace of telwatch's own (each step execs the next).
        w = start(["unshare", "--uts", "sh", "-c", f'hostname {host} && exec "$@"', "sh", telwatch, "--bus", address,
                   "--backend", "modemmanager", "--json", "--state-dir", state_dir, "--inhibit", "none",
                   "--config", conf], "telwatch", stdout=subprocess.PIPE)
        os.set_blocking(w.stdout.fileno(), False)
        w.buffer = b""
        return w

    def read_lines(w):
        try:
            chunk = w.stdout.read()
        except (BlockingIOError, ValueError):
            chunk = None
        if chunk:
            w.buffer += chunk
            *done, w.buffer = w.buffer.split(b"\n")
            lines.extend(json.loads(l) for l in done if l.strip())

    def wait_line(w, event, after, timeout=20):
        def found():
            read_lines(w)
            return next((l for l in lines[after:] if l.get("event") == event), None)
        return until(found, timeout)

    def sim(command):
        simulator.stdin.write((command + "\n").encode())
        simulator.stdin.flush()

    # What telwatch publishes, as an independent subscriber sees it (and to read after a failure).
    start(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-v", "-t", f"telwatch/{host}/#"],
          "mqtt-telwatch")
    watch = start_watch()
    check(wait_line(watch, "ready", 0) is not None, "telwatch is ready")
    prefix = None

    def entity_states():
        return {k: v for k, v in states().items() if ".telwatch_" in k}

    def wait_state(entity, value, timeout=15):
        return until(lambda: (entity_states().get(entity) or {}).get("state") == value, timeout, 0.05)

    check(until(lambda: len(entity_states()) >= 14, 30), "Home Assistant has telwatch's entities",
          str(sorted(entity_states())))
    e = entity_states()
    table = {}
    expected = {
        f"binary_sensor.{node}_ringing": "sound", f"binary_sensor.{node}_call_live": "running",
        f"sensor.{node}_call_state": "enum", f"sensor.{node}_last_caller": None,
        f"sensor.{node}_last_missed_caller": None, f"sensor.{node}_last_call": "timestamp",
        f"sensor.{node}_last_call_direction": "enum", f"sensor.{node}_last_call_duration": "duration",
        f"sensor.{node}_live_calls": None, f"sensor.{node}_missed_calls_unseen": None, f"event.{node}_call": None,
        f"sensor.{node}_calls_blocked_today": None,
    }
    for entity, device_class in expected.items():
        check(entity in e and e[entity]["attributes"].get("device_class") == device_class,
              f"{entity} (class {device_class})", str(e.get(entity)))
    ringing, live, call_state = f"binary_sensor.{node}_ringing", f"binary_sensor.{node}_call_live", f"sensor.{node}_call_state"
    buttons = reject_button, silence_button = f"button.{node}_reject", f"button.{node}_silence"
    for button in buttons:
        check(button in e, f"{button} (a button)", str(sorted(e)))
    buttons_state = lambda: [(entity_states().get(b) or {}).get("state") for b in buttons]
    buttons_available = lambda: all(st not in (None, "unavailable") for st in buttons_state())
    buttons_unavailable = lambda: all(st == "unavailable" for st in buttons_state())
    event_entity = f"event.{node}_call"
    counters = lambda: {i: int(float(states()[f"counter.fired_{i}"]["state"])) for i in range(len(counted))}
    delays = []

    def snapshot(label):
        now = entity_states()
        table[label] = {k: now[k]["state"] for k in expected if k in now}

    def delay(entity, line):
        # From telwatch's line to Home Assistant's last_changed of the entity (one clock: one host).
        from datetime import datetime
        changed = datetime.fromisoformat(entity_states()[entity]["last_changed"]).timestamp()
        said = datetime.fromisoformat(line["time"].replace("Z", "+00:00")).timestamp()
        delays.append(((changed - said) * 1000, f"{entity} on {line['event']}"))

    # Before the first call, as on a Home Assistant that has been up a while: telwatch's state
    # read (a ring that came before Home Assistant's subscription would come from unavailable,
    # not from off, and docs/mqtt.md's ring automation rightly would not fire).
    check(until(lambda: all(st["state"] != "unavailable" for k, st in entity_states().items() if k in expected)
                and entity_states()[ringing]["state"] == "off", 20), "before the first call: available, ringing off",
          str(entity_states().get(ringing)))
    check(until(buttons_unavailable, 10), "no call rings: Reject and Silence are unavailable", str(buttons_state()))
    snapshot("start")

    # Incoming, answered, hung up by the far end.
    n = len(lines); sim("ring +15550001")
    incoming = wait_line(watch, "incoming", n)
    check(wait_state(ringing, "on"), "ringing: on while a call rings")
    delay(ringing, incoming); snapshot("incoming ringing")
    check(until(buttons_available, 10), "a call rings: Reject and Silence are available", str(buttons_state()))
    n = len(lines); sim("answer c1")
    connected = wait_line(watch, "connected", n)
    check(wait_state(call_state, "connected"), "call state: connected after the answer")
    check(until(buttons_unavailable, 10), "the call in talk: the buttons are unavailable again", str(buttons_state()))
    delay(call_state, connected); snapshot("incoming answered")
    n = len(lines); sim("remote-hangup c1")
    ended = wait_line(watch, "disconnected", n)
    check(wait_state(live, "off"), "call live: off at the end")
    delay(live, ended)
    check(until(lambda: (entity_states()[event_entity]["attributes"].get("event_type") == "ended"), 10),
          "the Call event says ended", str(entity_states()[event_entity]))
    snapshot("answered call ended")
    # Missed.
    n = len(lines); sim("ring +15550002")
    wait_line(watch, "incoming", n); wait_state(ringing, "on")
    n = len(lines); sim("missed c2")
    missed = wait_line(watch, "missed", n)
    check(wait_state(f"sensor.{node}_missed_calls_unseen", "1"), "missed calls unseen: 1")
    delay(f"sensor.{node}_missed_calls_unseen", missed)
    check(wait_state(f"sensor.{node}_last_missed_caller", "+15550002"), "last missed caller")
    snapshot("missed")
    check(until(lambda: counters()[1] == 1, 10), "docs/mqtt.md's missed-call automation fired once", str(counters()))
    # Rejected by screening: the rejected-call automation, not the ring's.
    n = len(lines); sim("ring +19005550100")
    screened = wait_line(watch, "screened", n); wait_line(watch, "run-stopped", n)
    check(wait_state(f"sensor.{node}_calls_blocked_today", "1"), "calls blocked today: 1")
    delay(f"sensor.{node}_calls_blocked_today", screened)
    check(until(lambda: counters()[2] == 1, 10), "docs/mqtt.md's rejected-call automation fired once", str(counters()))
    check(counters()[0] == 2, "a rejected call fires no ring automation", str(counters()))
    # Whether the automation fired or not depends on how Home Assistant batches its state writes;
    # what telwatch published does not: no state said ringing for the blocked call.
    def published_states():
        try:
            log = open(os.path.join(work, "mqtt-telwatch.log"), errors="replace").read().splitlines()
        except OSError:
            return []
        found = []
        for line in log:
            topic, _, payload = line.partition(" ")
            if topic == f"telwatch/{host}/state":
                try:
                    found.append(json.loads(payload))
                except ValueError:
                    pass
        return found
    blocked = lambda: [st for st in published_states() if st.get("last_caller") == "+19005550100"]
    until(lambda: any(st.get("live_calls") == 0 for st in blocked()), 10)
    check(blocked() and not any(st.get("ringing") or st.get("state") == "ringing" for st in blocked()),
          "the blocked call never rings on telwatch's state topic", json.dumps(blocked()))
    snapshot("rejected")
    # Outgoing.
    n = len(lines); sim("dial +15550003")
    dialing = wait_line(watch, "dialing", n)
    check(wait_state(call_state, "dialing"), "call state: dialing")
    delay(call_state, dialing); snapshot("outgoing dialing")
    sim("alerting c4"); sim("answer c4")
    check(wait_state(call_state, "connected"), "call state: connected (outgoing)")
    n = len(lines); sim("hangup c4")
    wait_line(watch, "run-stopped", n)
    check(wait_state(f"sensor.{node}_last_call_direction", "outgoing"), "last call direction: outgoing")
    snapshot("outgoing ended")
    # Waiting and held.
    sim("ring +15550004"); wait_state(ringing, "on"); sim("answer c5"); wait_state(call_state, "connected")
    sim("waiting +15550005")
    check(wait_state(ringing, "on") and wait_state(f"sensor.{node}_live_calls", "2"), "a waiting call rings; 2 live calls")
    snapshot("waiting")
    sim("hold c5"); sim("answer c6")
    check(wait_state(ringing, "off") and wait_state(call_state, "connected"), "held and answered")
    snapshot("held")
    n = len(lines); sim("remote-hangup c6"); sim("resume c5"); sim("hangup c5")
    wait_line(watch, "run-stopped", n)
    check(wait_state(live, "off"), "idle again")
    rings = counters()[0]
    check(rings == 4, "docs/mqtt.md's ring automation fired once per ring (4)", str(counters()))

    # telwatch killed while a call rings; the call missed while it is down; telwatch again.
    n = len(lines); sim("ring +15550006"); wait_line(watch, "incoming", n)
    check(wait_state(ringing, "on"), "ringing before the kill")
    check(until(lambda: counters()[0] == rings + 1, 10), "its ring automation fired once", str(counters()))
    rings += 1
    stop(watch, signal.SIGKILL)
    check(wait_state(ringing, "unavailable", 10), "SIGKILL: unavailable (the last will)")
    snapshot("SIGKILL mid-ring")
    sim("missed c7")
    seen = []
    watch = start_watch()
    def watch_ringing():
        st = entity_states().get(ringing, {}).get("state")
        if not seen or seen[-1] != st: seen.append(st)
        return st == "off"
    check(until(watch_ringing, 30, 0.01), "restarted: ringing off", str(seen))
    check("on" not in seen, "no ring replayed after the restart", str(seen))
    check(wait_state(f"sensor.{node}_missed_calls_unseen", "2"), "the call missed while telwatch was down counts")
    snapshot("restart after a missed call")
    check(counters()[0] == rings, "no ring automation on the restart", str(counters()))
    # SIGTERM mid-call, and back.
    n = len(lines); sim("ring +15550007"); wait_line(watch, "incoming", n); sim("answer c8")
    wait_state(call_state, "connected")
    stop(watch, signal.SIGTERM)
    check(wait_state(ringing, "unavailable", 10), "SIGTERM: unavailable")
    watch = start_watch()
    check(wait_state(call_state, "connected", 30), "restarted mid-call: connected")
    snapshot("restart mid-call")
    n = len(lines); sim("remote-hangup c8"); wait_line(watch, "run-stopped", n)
    check(wait_state(live, "off"), "the call found at start ends")
    fired = counters()

    # Home Assistant restarted: nothing fires again.
    stop(ha)
    ha = start_ha()
    check(until(ha_up, 240, 0.5), "Home Assistant restarted")
    check(until(lambda: entity_states().get(call_state, {}).get("state") == "idle", 60), "after HA's restart: idle")
    time.sleep(2)  # what a restart could fire has had its chance (the automations are loaded)
    check(counters() == fired, "no automation fired on Home Assistant's restart", f"{fired} → {counters()}")
    snapshot("Home Assistant restarted")
    # docs/mqtt.md's automations still hear their events after Home Assistant's restart (MQTT
    # set up at its start this time), and more calls for line → last_changed.
    n = len(lines); sim("ring +15550009"); incoming = wait_line(watch, "incoming", n)
    check(wait_state(ringing, "on"), "after HA's restart: ringing"); delay(ringing, incoming)
    after_ring = counters()
    n = len(lines); sim("missed c9"); missed = wait_line(watch, "missed", n)
    check(wait_state(ringing, "off"), "after HA's restart: the missed call ends"); delay(ringing, missed)
    check(until(lambda: counters()[1] == fired[1] + 1, 10), "after HA's restart the missed-call automation fires",
          f"{fired} → {counters()}")
    n = len(lines); sim("ring +19005550101"); wait_line(watch, "screened", n); wait_line(watch, "run-stopped", n)
    check(until(lambda: counters()[2] == fired[2] + 1, 10), "after HA's restart the rejected-call automation fires",
          f"{fired} → {counters()}")
    check(counters()[0] == fired[0] + 1, "after HA's restart the ring automation fired once",
          f"{fired} → {after_ring} (rang) → {counters()}")
    def step(command, event, entity, state):
        # One simulator command, telwatch's line for it, and Home Assistant's state after it.
        n = len(lines); sim(command); line = wait_line(watch, event, n)
        if line and wait_state(entity, state):
            delay(entity, line)
            return True
        return False
    seen = []
    for number in range(11, 19):
        seen += [step(f"ring +155500{number}", "incoming", ringing, "on"),
                 step(f"answer c{number}", "connected", call_state, "connected"),
                 step(f"remote-hangup c{number}", "disconnected", live, "off")]
    check(all(seen), "8 more calls: ringing, connected and ended each seen", str(seen))
    check(counters()[0] == fired[0] + 9, "one ring automation per ring (8 more calls)", f"{fired} → {counters()}")

    # The buttons pressed in Home Assistant: Silence, then Reject, on the one call ringing.
    n = len(lines); sim("ring +15550020"); wait_line(watch, "incoming", n)
    check(until(buttons_available, 10), "ringing again: the buttons are available", str(buttons_state()))
    n = len(lines); api("POST", "/api/services/button/press", {"entity_id": silence_button})
    silenced = wait_line(watch, "screened", n)
    check(silenced is not None and silenced.get("action") == "silence" and silenced.get("rule") == "user",
          "Silence pressed in Home Assistant: telwatch silences the call", str(silenced))
    n = len(lines); api("POST", "/api/services/button/press", {"entity_id": reject_button})
    acted = wait_line(watch, "acted", n)
    check(acted is not None and (acted.get("act"), acted.get("by"), acted.get("result")) == ("hangup", "mqtt", "ok"),
          "Reject pressed in Home Assistant: telwatch hangs the call up, asked by MQTT", str(acted))
    hung_up = wait_line(watch, "disconnected", n)
    check(hung_up is not None and hung_up.get("number") == "+15550020", "the rejected call ends in telwatch's stream",
          str(hung_up))
    check(wait_state(ringing, "off") and until(buttons_unavailable, 10), "after the reject: nothing rings, the buttons "
          "are unavailable", str(buttons_state()))
    refusals = [l for l in open(os.path.join(work, "telwatch.log"), errors="replace").read().splitlines()
                if "was refused" in l]
    check(not refusals, "no command from Home Assistant was refused", "\n".join(refusals))

    # Discovery turned off: the entities go.
    stop(watch)
    write_conf("mqtt-homeassistant = false\n")
    watch = start_watch()
    check(until(lambda: not any(k in entity_states() for k in list(expected) + list(buttons)), 30),
          "discovery off: the entities are removed",
          str(sorted(entity_states())))
    warnings = ha_warnings()
    check(not warnings, "Home Assistant logs no warning about telwatch's MQTT", "\n".join(warnings[:10]))
    # The canary: an event entity of the tier's own given an event type it does not know, which
    # Home Assistant warns about; the check above must see such a line.
    pub = lambda topic, payload: subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker_port),
                                                 "-t", topic, "-m", payload], timeout=10, check=True)
    pub("homeassistant/event/tier_canary/config", json.dumps(
        {"name": "canary", "unique_id": "tier_canary", "state_topic": "tier/canary", "event_types": ["known"]}))
    check(until(lambda: any(k.startswith("event.") and "canary" in k for k in states()), 20), "the canary entity is there")
    # Sent again until it is heard: Home Assistant subscribes a moment after the entity appears.
    def canary_warned():
        pub("tier/canary", json.dumps({"event_type": "unknown"}))
        return [l for l in ha_warnings() if "tier/canary" in l]
    canary = until(canary_warned, 10, 0.5)
    check(bool(canary), "the log check sees Home Assistant's warnings (the canary's)", str(canary))
    pub("homeassistant/event/tier_canary/config", "")
    delays.sort()
    if delays:
        print(f"  line → last_changed: p50 {delays[len(delays) // 2][0]:.1f} ms, max {delays[-1][0]:.1f} ms"
              f" ({delays[-1][1]}), {len(delays)} samples")
    print("  states:", json.dumps(table, indent=1))
    failed -= 1
except Exception as error:
    print(f"  FAIL the tier stopped: {error!r}")
finally:
    for p in reversed(list(processes)):
        stop(p)
    print(f"  (the tier took {time.monotonic() - started_at:.0f} s)")
    if failed:
        print(f"  its logs are kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"homeassistant: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
