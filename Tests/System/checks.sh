#!/bin/bash
# The system test's checks, run as root inside the booted Debian (scripts/system-test) with the
# share at $1: it holds the package (telwatch_*.deb) and the simulated modem (atmodem.py); each
# check appends one line to $1/results, "ok NAME: DETAIL" or "FAIL NAME: DETAIL". The system has
# no network: MQTT goes to the mosquitto of this same system, over loopback.
# Every wait is bounded; a check that fails leaves the next ones to run (each sets up what it needs).
set -u
share=$1
results=$share/results
work=/run/system-test
mkdir -p "$work"
: > "$results"
deb=$(ls "$share"/telwatch_*.deb | head -n 1)
# HOME as in an administrator's root shell (a unit's environment has none).
export DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER="" LC_ALL=C.UTF-8 HOME=/root

say() { echo "== $*"; }
ok() { echo "ok $1: $2" >> "$results"; echo "ok $1: $2"; }
fail() { echo "FAIL $1: $2" >> "$results"; echo "FAIL $1: $2"; }
# check NAME DETAIL CMD…: ok when CMD succeeds.
check() {
    local name=$1 detail=$2
    shift 2
    if "$@"; then ok "$name" "$detail"; else fail "$name" "$detail"; fi
}
# wait_for SECONDS CMD…: polls CMD until it succeeds; fails after SECONDS.
wait_for() {
    local bound=$1 deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            echo "(waited in vain $bound s for: $*)"
            return 1
        fi
        sleep 0.5
    done
}
one_line() { tr '\n' ' ' | sed 's/  */ /g; s/ $//' | cut -c1-400; }
unit_state() { systemctl show -p "$1" --value telwatch; }
main_pid() { systemctl show -p MainPID --value telwatch; }
running() { [ "$(unit_state ActiveState)/$(unit_state SubState)" = active/running ]; }
journal_since() { journalctl -q --no-pager -o cat --since "@$1" "${@:2}"; }
telwatch_journal_has() { journal_since "$1" -u telwatch | grep -qE -- "$2"; }
lock_held() { systemd-inhibit --list --no-pager --no-legend | grep -E '^ *telwatch ' | grep -qw block; }
lock_gone() { ! lock_held; }
as_user() { local user=$1; shift; runuser -u "$user" -- env HOME="/home/$user" "$@"; }

# The simulated modem's control socket: one command, one reply line ("ok …").
atctl() {
    python3 - "$@" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect("/run/atmodem-control")
s.sendall((" ".join(sys.argv[1:]) + "\n").encode())
data = b""
while not data.endswith(b"\n"):
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
line = data.decode().strip()
print(line[3:] if line.startswith("ok ") else "" if line == "ok" else line)
sys.exit(0 if line.startswith("ok") else 1)
EOF
}

modem=""
modem_state() { mmcli -m "$modem" -K 2>/dev/null | awk -F': ' '/modem.generic.state / { print $2 }' | tr -d ' '; }
# The call object of NUMBER in ModemManager (it lists a ringing call with its number).
call_of() {
    local path
    for path in $(mmcli -m "$modem" --voice-list-calls 2>/dev/null | grep -o '/org/freedesktop/ModemManager1/Call/[0-9]*'); do
        mmcli -o "$path" -K 2>/dev/null | grep -q "call.properties.number *: *$1\$" && { echo "$path"; return 0; }
    done
    return 1
}
call_exists() { call_of "$1" >/dev/null; }
mm_in_call_count() { journalctl -q --no-pager -o cat -u ModemManager | grep -c "modem is now in-call state"; }
mm_in_call_after() { [ "$(mm_in_call_count)" -gt "$1" ]; }

# ---------------------------------------------------------------------------------------------
say "1. install and enable"
t_install=$(date +%s)
if apt-get install -y --no-install-recommends "$deb" > "$work/install.log" 2>&1; then
    ok install "apt-get install ./$(basename "$deb") (no network: every dependency was there)"
else
    fail install "apt-get install: $(tail -n 5 "$work/install.log" | one_line)"
fi
check install-disabled "the unit is not enabled on installation ($(systemctl is-enabled telwatch 2>&1))" \
    test "$(systemctl is-enabled telwatch 2>&1)" = disabled
unknown=$(journal_since "$t_install" -u dbus | grep -i 'unknown group' | one_line)
check install-dbus-group "dbus-daemon read the policy without an unknown group${unknown:+: $unknown}" test -z "$unknown"

timeout 90 systemctl enable --now telwatch > "$work/enable.log" 2>&1
state="$(systemctl show -p ActiveState,SubState,StatusText telwatch | one_line)"
check enable-ready "systemctl enable --now: $state" \
    sh -c 'systemctl show -p ActiveState,SubState telwatch | tr "\n" " " | grep -q "ActiveState=active SubState=running" \
        && [ -n "$(systemctl show -p StatusText --value telwatch)" ]'

useradd -m -G telwatch member
useradd -m outsider

# ---------------------------------------------------------------------------------------------
say "ModemManager in test mode, the simulated modem"
mkdir -p /etc/systemd/system/ModemManager.service.d /etc/polkit-1/rules.d
cat > /etc/systemd/system/ModemManager.service.d/system-test.conf <<'EOF'
[Service]
ExecStart=
ExecStart=/usr/sbin/ModemManager --test-enable --test-no-udev --test-no-suspend-resume --test-no-qrtr --debug
EOF
# The test's root drives the modem (Enable, Accept) with mmcli: allow it without an agent.
cat > /etc/polkit-1/rules.d/10-system-test.rules <<'EOF'
polkit.addRule(function(action, subject) {
    if (action.id.indexOf("org.freedesktop.ModemManager1.") == 0 && subject.user == "root")
        return polkit.Result.YES;
});
EOF
systemctl daemon-reload
timeout 60 systemctl restart ModemManager
systemd-run --unit=atmodem --collect -p StandardOutput=journal \
    python3 "$share/atmodem.py" --unix /run/atmodem.sock --control /run/atmodem-control --log "$work/atmodem.log" \
    >/dev/null 2>&1
wait_for 30 test -S /run/atmodem-control
wait_for 30 busctl status org.freedesktop.ModemManager1
timeout 30 busctl call org.freedesktop.ModemManager1 /org/freedesktop/ModemManager1 \
    org.freedesktop.ModemManager1.Test SetProfile ssas system-test generic 1 /run/atmodem.sock
wait_for 60 sh -c "mmcli -L | grep -q /org/freedesktop/ModemManager1/Modem/"
modem=$(mmcli -L 2>/dev/null | grep -o '/org/freedesktop/ModemManager1/Modem/[0-9]*' | head -n 1)
wait_for 60 sh -c "mmcli -m '$modem' -K | grep -q 'modem.generic.state .*: disabled'"
timeout 60 mmcli -m "$modem" -e >/dev/null 2>&1
wait_for 60 sh -c "mmcli -m '$modem' -K | grep -q 'modem.generic.state .*: registered'"
check modem-up "ModemManager (test mode, systemd unit) has the simulated modem ${modem:-(none)}, $(modem_state)" \
    test "$(modem_state)" = registered

# ---------------------------------------------------------------------------------------------
say "2. a ring: the journal's line and the block lock, gone after the hang-up"
# telwatch events, followed during this ring by root and by a group member (checked in 3).
timeout 60 telwatch events > "$work/events-root.out" 2> "$work/events-root.err" &
events_root=$!
timeout 60 runuser -u member -- env HOME=/home/member telwatch events > "$work/events-member.out" 2> "$work/events-member.err" &
events_member=$!
sleep 3
number=+15557654321
t=$(date +%s)
atctl ring "$number" >/dev/null
if wait_for 30 telwatch_journal_has "$t" "incoming .*\\$number"; then
    ok ring-journal "journalctl -u telwatch: $(journal_since "$t" -u telwatch | grep -E 'incoming' | head -n 1 | one_line)"
else
    fail ring-journal "no incoming line for $number in journalctl -u telwatch: $(journal_since "$t" -u telwatch | one_line)"
fi
if wait_for 20 lock_held; then
    ok ring-lock "systemd-inhibit --list: $(systemd-inhibit --list --no-pager --no-legend | grep -E '^ *telwatch ' | one_line)"
else
    fail ring-lock "no telwatch block lock while ringing: $(systemd-inhibit --list --no-pager | one_line)"
fi
atctl remote-hangup >/dev/null
check hangup-lock "the lock is gone after the caller gave up" wait_for 30 lock_gone
sleep 2
kill "$events_root" "$events_member" 2>/dev/null
wait "$events_root" "$events_member" 2>/dev/null

# ---------------------------------------------------------------------------------------------
say "3. status, log, events: root, a member of the telwatch group, an outsider"
out=$(telwatch status 2>&1); rc=$?
check status-root "exit $rc: $(echo "$out" | one_line)" test $rc -eq 0
check status-modems "status counts the modem that came after telwatch started" \
    sh -c 'echo "$1" | grep -q "1 voice modem"' sh "$out"
out=$(as_user member telwatch status 2>&1); rc=$?
check status-member "exit $rc: $(echo "$out" | one_line)" test $rc -eq 0
out=$(as_user outsider telwatch status 2>&1); rc=$?
check status-outsider "exit $rc, one line: $(echo "$out" | one_line)" \
    sh -c '[ $1 -ne 0 ] && [ "$(echo "$2" | wc -l)" -eq 1 ] && echo "$2" | grep -q "does not answer this user"' sh $rc "$out"

out=$(telwatch log 2>&1); rc=$?
check log-root "exit $rc: $(echo "$out" | one_line)" \
    sh -c '[ $1 -eq 0 ] && echo "$2" | grep -q -- "$3" && echo "$2" | grep -q /var/lib/telwatch' sh $rc "$out" "$number"
out=$(as_user member telwatch log --state-dir /var/lib/telwatch 2>&1); rc=$?
check log-member "exit $rc: $(echo "$out" | one_line)" \
    sh -c '[ $1 -eq 0 ] && echo "$2" | grep -q -- "$3"' sh $rc "$out" "$number"
out=$(as_user member telwatch log --state-dir /var/lib/telwatch --mark-seen 2>&1); rc=$?
check log-member-mark-seen "exit $rc: $(echo "$out" | one_line)" test $rc -eq 0
out=$(as_user outsider telwatch log --state-dir /var/lib/telwatch 2>&1); rc=$?
check log-outsider "exit $rc: $(echo "$out" | one_line)" \
    sh -c '[ $1 -ne 0 ] && echo "$2" | grep -qi "permission denied" && echo "$2" | grep -q "adduser"' sh $rc "$out"

for who in root member; do
    if grep -q -- "$number" "$work/events-$who.out"; then
        ok "events-$who" "telwatch events saw the ring: $(grep -- "$number" "$work/events-$who.out" | head -n 1 | one_line)"
    else
        fail "events-$who" "telwatch events did not see the ring: $(one_line < "$work/events-$who.out") $(one_line < "$work/events-$who.err")"
    fi
done
out=$(timeout 20 runuser -u outsider -- env HOME=/home/outsider telwatch events 2>&1); rc=$?
check events-outsider "exit $rc, one line: $(echo "$out" | one_line)" \
    sh -c '[ $1 -ne 0 ] && [ $1 -ne 124 ] && [ "$(echo "$2" | wc -l)" -eq 1 ] && echo "$2" | grep -q "does not answer this user"' sh $rc "$out"

# ---------------------------------------------------------------------------------------------
say "3b. call screening as packaged: the service hangs up a blocked caller, polkit allowing the telwatch user"
# The package names an empty rules file; `telwatch block NUMBER`, typed as root, is all the
# administrator does: the running service reads the edit at once.
blocked=+15550009999
cp -p /etc/telwatch/screening.conf "$work/screening.conf.packaged"
t=$(date +%s)
out=$(telwatch block "$blocked" 2>&1); rc=$?
check screening-block "telwatch block $blocked as typed, exit $rc: $(echo "$out" | one_line)" \
    test $rc -eq 0 -a "$out" = "blocked $blocked in /etc/telwatch/screening.conf"
mode=$(stat -c '%U:%G %a' /etc/telwatch/screening.conf)
check screening-block-mode "the rules file stays root's, 0644: $mode" test "$mode" = "root:root 644"
sleep 2
warned=$(journal_since "$t" -u telwatch | grep 'screening:' | one_line)
check screening-config "the service read the edit without a word${warned:+: $warned}" test -z "$warned"

out=$(telwatch doctor --user telwatch 2>&1); rc=$?
line=$(echo "$out" | grep -m 1 'screening' | one_line)
check screening-doctor "telwatch doctor --user telwatch, exit $rc: ${line:-no screening line: $(echo "$out" | one_line)}" \
    sh -c 'echo "$1" | grep -q "^✔ screening /etc/telwatch/screening.conf: rules read (1 number or prefix listed); it may hang up calls as this user (polkit allows ModemManager.s org.freedesktop.ModemManager1.Voice)$"' sh "$line"
out=$(telwatch doctor --user outsider --backend modemmanager --inhibit none --screening /etc/telwatch/screening.conf 2>&1); rc=$?
line=$(echo "$out" | grep -m 1 'screening' | one_line)
check screening-doctor-outsider "the rule is the telwatch user's only: doctor --user outsider, exit $rc: ${line:-no screening line: $(echo "$out" | one_line)}" \
    sh -c '[ $1 -eq 4 ] && echo "$2" | grep -q "^✘ screening .*it may not hang up calls as this user: polkit does not allow ModemManager.s org.freedesktop.ModemManager1.Voice: a rejected call would ring$"' sh $rc "$line"

# The event stream as JSON: `telwatch events` writes the screened event there (its text shows calls,
# runs, sleeps and stacks).
timeout 60 telwatch events --json > "$work/events-screening.out" 2> "$work/events-screening.err" &
events_screening=$!
sleep 3
dialogue=$(wc -l < "$work/atmodem.log")
t=$(date +%s)
atctl ring "$blocked" >/dev/null
hung_up() { tail -n +"$((dialogue + 1))" "$work/atmodem.log" | grep -qE '<- (ATH|AT\+CHUP)'; }
no_calls() { [ -z "$(atctl calls)" ]; }
if wait_for 30 hung_up && wait_for 20 no_calls; then
    ok screening-hangup "the simulated modem received $(tail -n +"$((dialogue + 1))" "$work/atmodem.log" | grep -m 1 -oE '<- (ATH|AT\+CHUP)[^ ]*' | cut -c4-) and lists no call"
else
    fail screening-hangup "no ATH/AT+CHUP after the ring of $blocked (calls: $(atctl calls)); telwatch: $(journal_since "$t" -u telwatch | one_line)"
    atctl remote-hangup >/dev/null
fi
if wait_for 20 telwatch_journal_has "$t" "screened .*reject .*\\$blocked.*hangup=requested"; then
    ok screening-journal "journalctl -u telwatch: $(journal_since "$t" -u telwatch | grep -m 1 screened | one_line)"
else
    fail screening-journal "no screened ... reject ... hangup=requested for $blocked: $(journal_since "$t" -u telwatch | one_line)"
fi
sleep 3
refused=$(journal_since "$t" -u telwatch | grep -E 'did not hang up|AccessDenied|NotAuthorized|not authorized' | one_line)
check screening-no-refusal "ModemManager took the hang-up${refused:+: $refused}" test -z "$refused"
kill "$events_screening" 2>/dev/null; wait "$events_screening" 2>/dev/null
screened=$(grep -m 1 '"event":"screened"' "$work/events-screening.out")
if [ -n "$screened" ]; then
    detail=$(echo "$screened" | one_line)
else
    detail="no screened event: $(one_line < "$work/events-screening.out") $(one_line < "$work/events-screening.err")"
fi
check screening-events "telwatch events --json: $detail" \
    sh -c 'for part in "\"number\":\"$2\"" "\"action\":\"reject\"" "\"rule\":\"block\"" "\"hangup\":\"requested\""; do
        case "$1" in *"$part"*) ;; *) exit 1 ;; esac; done' sh "$screened" "$blocked"
cp -p "$work/screening.conf.packaged" /etc/telwatch/screening.conf
wait_for 30 lock_gone

# ---------------------------------------------------------------------------------------------
say "4. MQTT to the mosquitto of this system, the packaged unit unchanged"
sed -i 's|^#mqtt = mqtt://localhost:1883$|mqtt = mqtt://localhost:1883|' /etc/telwatch/telwatch.conf
grep -q '^mqtt = mqtt://localhost:1883$' /etc/telwatch/telwatch.conf || echo 'mqtt = mqtt://localhost:1883' >> /etc/telwatch/telwatch.conf
timeout 60 systemctl start mosquitto
wait_for 30 bash -c 'exec 3<>/dev/tcp/127.0.0.1/1883'
changed=$(dpkg --verify telwatch 2>&1 | grep -v ' c /etc/telwatch/telwatch.conf$' | one_line)
dropins=$(systemctl show -p DropInPaths --value telwatch)
check mqtt-unit-unchanged "only the configuration differs from the package${changed:+: $changed}${dropins:+; drop-ins $dropins}" \
    test -z "$changed$dropins"
t=$(date +%s)
timeout 90 systemctl restart telwatch
timeout 60 mosquitto_sub -h localhost -t '#' -v > "$work/mqtt.out" 2>&1 &
sub=$!
sleep 3
number=+15550004444
atctl ring "$number" >/dev/null
if wait_for 40 grep -q -- "$number" "$work/mqtt.out"; then
    ok mqtt "mosquitto_sub got the call: $(grep -- "$number" "$work/mqtt.out" | head -n 1 | cut -c1-200)"
else
    fail mqtt "nothing for $number on the broker; telwatch: $(journal_since "$t" -u telwatch -p warning | one_line)"
fi
atctl remote-hangup >/dev/null
wait_for 30 lock_gone
kill "$sub" 2>/dev/null; wait "$sub" 2>/dev/null
family=$(journal_since "$t" -u telwatch | grep -i 'address family' | one_line)
check mqtt-address-family "no 'Address family not supported'${family:+: $family}" test -z "$family"

# ---------------------------------------------------------------------------------------------
say "5. a bad configuration stops the unit after one try"
cp /etc/telwatch/telwatch.conf "$work/telwatch.conf"
echo 'no-such-setting = 1' >> /etc/telwatch/telwatch.conf
t=$(date +%s)
timeout 60 systemctl restart telwatch > "$work/restart-bad.log" 2>&1; rc=$?
sleep 8
state="$(systemctl show -p ActiveState,SubState,NRestarts,Result telwatch | one_line)"
message=$(journal_since "$t" -u telwatch | grep -m 1 'no-such-setting' | one_line)
check bad-config "systemctl restart exit $rc; after 8 s: $state; journal: ${message:-(no message naming the setting)}" \
    sh -c '[ $1 -ne 0 ] && [ "$(systemctl show -p NRestarts --value telwatch)" = 0 ] \
        && case "$(systemctl show -p ActiveState --value telwatch)" in failed|inactive) true ;; *) false ;; esac \
        && [ -n "$2" ]' sh $rc "$message"
cp "$work/telwatch.conf" /etc/telwatch/telwatch.conf
systemctl reset-failed telwatch 2>/dev/null
timeout 90 systemctl start telwatch

# ---------------------------------------------------------------------------------------------
say "6. restart and SIGKILL during an answered call: one row, the real connected_at"
number=+15550006666
wait_for 30 running
atctl ring "$number" >/dev/null
wait_for 30 call_exists "$number"
call=$(call_of "$number")
before=$(mm_in_call_count)
timeout 30 mmcli -o "$call" --accept >/dev/null 2>&1
t_answer=$(date +%s.%N)
wait_for 20 mm_in_call_after "$before"
wait_for 20 telwatch_journal_has "${t_answer%.*}" "\\$number"
sleep 5
t_restart=$(date +%s.%N)
timeout 90 systemctl restart telwatch
wait_for 30 running
sleep 3
pid=$(main_pid)
kill -9 "$pid"
wait_for 60 sh -c '[ "$(systemctl show -p MainPID --value telwatch)" != "$1" ] && [ "$(systemctl show -p MainPID --value telwatch)" != 0 ] \
    && [ "$(systemctl show -p SubState --value telwatch)" = running ]' sh "$pid"
relive="$(systemctl show -p NRestarts,ActiveState,StatusText telwatch | one_line)"
sleep 3
atctl remote-hangup >/dev/null
wait_for 30 lock_gone
sleep 2
# The directory named: this check is about the rows; log-root is about finding the directory.
telwatch log --json --state-dir /var/lib/telwatch > "$work/log.json" 2> "$work/log.err"
verdict=$(python3 - "$work/log.json" "$number" "$t_answer" "$t_restart" <<'EOF'
import datetime, json, sys
path, number, answered, restarted = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = []
for line in open(path):
    line = line.strip()
    if line:
        value = json.loads(line)
        rows.extend(value if isinstance(value, list) else [value])
rows = [r for r in rows if r.get("number") == number]
def seconds(value):
    if value is None or isinstance(value, (int, float)):
        return value
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
if len(rows) != 1:
    print("FAIL %d rows: %s" % (len(rows), " | ".join("%s %s connected_at=%s" % (r.get("state"), r.get("reason"), r.get("connected_at")) for r in rows)))
    sys.exit()
row = rows[0]
connected = seconds(row.get("connected_at"))
detail = "one row, state %s, connected_at %s (answered %.1f s before the restart), duration %s" % (
    row.get("state"), row.get("connected_at"), restarted - answered, row.get("duration"))
good = connected is not None and answered - 5 <= connected < restarted
print(("ok " if good else "FAIL ") + detail)
EOF
)
case "$verdict" in
    ok\ *) ok restart-call "${verdict#ok }; after SIGKILL: $relive" ;;
    *) fail restart-call "${verdict#FAIL }; after SIGKILL: $relive; $(one_line < "$work/log.err")" ;;
esac

# ---------------------------------------------------------------------------------------------
say "7. reload"
wait_for 30 running
t=$(date +%s)
timeout 30 systemctl reload telwatch; rc=$?
if wait_for 20 telwatch_journal_has "$t" "reloaded the configuration"; then
    warned=$(journal_since "$t" -u telwatch -p warning | grep 'reloaded the configuration' | one_line)
    check reload "systemctl reload exit $rc: $(journal_since "$t" -u telwatch | grep -m 1 reloaded | one_line)${warned:+; at warning priority}" \
        test $rc -eq 0 -a -z "$warned"
else
    fail reload "systemctl reload exit $rc, the journal says: $(journal_since "$t" -u telwatch | one_line)"
fi

# ---------------------------------------------------------------------------------------------
say "8. stop"
timeout 60 systemctl stop telwatch; rc=$?
status=$(systemctl status telwatch --no-pager 2>&1 | grep -E 'Active:|Status:' | one_line)
check stop "exit $rc: $status" \
    sh -c '[ $1 -eq 0 ] && [ "$(systemctl show -p ActiveState --value telwatch)" = inactive ] \
        && ! systemctl status telwatch --no-pager 2>&1 | grep -q "Status: \"stopping"' sh $rc

# ---------------------------------------------------------------------------------------------
say "9. remove, purge, reinstall"
timeout 60 systemctl enable --now telwatch >/dev/null 2>&1
wait_for 30 running
pid=$(main_pid)
apt-get remove -y telwatch > "$work/remove.log" 2>&1; rc=$?
check remove "apt-get remove exit $rc; telwatch processes after: $(pgrep -a -x telwatch | one_line)" \
    sh -c '[ $1 -eq 0 ] && ! kill -0 "$2" 2>/dev/null && ! pgrep -x telwatch >/dev/null' sh $rc "$pid"
apt-get purge -y telwatch > "$work/purge.log" 2>&1; rc=$?
link=/etc/systemd/system/multi-user.target.wants/telwatch.service
left=""
[ -e /var/lib/telwatch ] && left="$left /var/lib/telwatch"
{ [ -e "$link" ] || [ -L "$link" ]; } && left="$left $link"
[ -e /etc/telwatch/telwatch.conf ] && left="$left /etc/telwatch/telwatch.conf"
check purge "apt-get purge exit $rc; left:${left:- nothing of the package}; the account stays: $(getent passwd telwatch | one_line)" \
    sh -c '[ $1 -eq 0 ] && [ -z "$2" ] && getent passwd telwatch >/dev/null' sh $rc "$left"
apt-get install -y --no-install-recommends "$deb" > "$work/reinstall.log" 2>&1; rc=$?
check reinstall "apt-get install exit $rc; $(systemctl is-enabled telwatch 2>&1), $(systemctl is-active telwatch 2>&1)" \
    sh -c '[ $1 -eq 0 ] && [ "$(systemctl is-enabled telwatch 2>&1)" = disabled ] && ! systemctl is-active -q telwatch' sh $rc

# ---------------------------------------------------------------------------------------------
say "10. the phone's way: the user unit in a lingering user's session, feedbackd, a notification"
useradd -m phone
uid=$(id -u phone)
as_phone() {
    runuser -u phone -- env HOME=/home/phone XDG_RUNTIME_DIR="/run/user/$uid" \
        DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" "$@"
}
loginctl enable-linger phone
wait_for 60 test -S "/run/user/$uid/bus"
wait_for 60 as_phone systemctl --user is-system-running --quiet --wait
# feedbackd's stock theme busy-loops with no sound card or vibra: the project's test theme of short
# Dummy feedbacks, in a place the phone user can read.
install -D -m 644 "$share/feedbackd-theme.json" /usr/local/share/system-test/feedbackd-theme.json
as_phone systemd-run --user --quiet --unit=feedbackd -E FEEDBACK_THEME=/usr/local/share/system-test/feedbackd-theme.json \
    -E GSETTINGS_BACKEND=memory /usr/libexec/feedbackd
as_phone systemd-run --user --quiet --unit=notifications python3 -m dbusmock --template notification_daemon
wait_for 30 as_phone busctl --user status org.sigxcpu.Feedback
wait_for 30 as_phone busctl --user status org.freedesktop.Notifications
as_phone timeout 240 dbus-monitor --session "interface='org.sigxcpu.Feedback'" \
    "interface='org.freedesktop.Notifications'" > "$work/session-monitor.out" 2>&1 &
monitor=$!
# The user unit reads no configuration file: the actions are turned on in a drop-in, as
# `systemctl --user edit telwatch` would write it, with the packaged unit's own ExecStart words.
packaged=$(sed -n '/^ExecStart=/,/[^\\]$/p' /usr/lib/systemd/user/telwatch.service | sed 's/^ExecStart=//; s/\\$//' | tr '\n' ' ')
mkdir -p /home/phone/.config/systemd/user/telwatch.service.d
printf '[Service]\nExecStart=\nExecStart=%s --feedback --notify\n' "$packaged" \
    > /home/phone/.config/systemd/user/telwatch.service.d/phone.conf
chown -R phone: /home/phone/.config
as_phone systemctl --user daemon-reload
timeout 90 runuser -u phone -- env XDG_RUNTIME_DIR="/run/user/$uid" DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" \
    systemctl --user enable --now telwatch > "$work/user-enable.log" 2>&1; rc=$?
state="$(as_phone systemctl --user show -p ActiveState,SubState,StatusText telwatch | one_line)"
check phone-unit "systemctl --user enable --now telwatch exit $rc: $state" \
    sh -c '[ $1 -eq 0 ] && echo "$2" | grep -q "ActiveState=active SubState=running"' sh $rc "$state"
out=$(as_phone telwatch block +15550008888 2>&1); rc=$?
check phone-block "telwatch block as the phone's user, exit $rc: $(echo "$out" | one_line)" \
    test $rc -eq 0 -a "$out" = "blocked +15550008888 in /home/phone/.config/telwatch/screening.conf"
sleep 2
number=+15550007777
atctl ring "$number" >/dev/null
if wait_for 40 grep -q '"phone-incoming-call"' "$work/session-monitor.out"; then
    ok phone-ring "feedbackd was asked for phone-incoming-call on the user's session bus"
else
    fail phone-ring "no TriggerFeedback phone-incoming-call; user unit: $(as_phone journalctl --user -q --no-pager -o cat -u telwatch | tail -n 5 | one_line)"
fi
atctl remote-hangup >/dev/null
if wait_for 40 grep -q "\"$number at " "$work/session-monitor.out"; then
    ok phone-missed "the missed call's notification: $(grep -m 1 -- "\"$number at " "$work/session-monitor.out" | one_line)"
else
    fail phone-missed "no Notify for $number; user unit: $(as_phone journalctl --user -q --no-pager -o cat -u telwatch | tail -n 5 | one_line)"
fi
as_phone journalctl --user -q --no-pager -u telwatch > "$share/telwatch-user-journal.txt" 2>&1
as_phone systemctl --user stop telwatch
kill "$monitor" 2>/dev/null; wait "$monitor" 2>/dev/null

say "done"
journalctl -q --no-pager -u telwatch > "$share/telwatch-journal.txt" 2>&1
cp "$work"/*.log "$work"/*.out "$work"/*.err "$work"/*.json "$share/" 2>/dev/null
exit 0
