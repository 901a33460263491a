'''oFono voice-call mock for telwatch's integration tests (python3-dbusmock template).

Not dbusmock's own "ofono" template: that one has no incoming calls, never changes a call's state
and never puts CallRemoved on the bus. Start this one on a PRIVATE bus only (see README.md):

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=$d/bus /usr/bin/python3 -m dbusmock --system \
        -t Tests/Fixtures/dbusmock/ofono.py [-p '{"modems": ["phonesim"], "calls": [...]}']

It owns org.ofono with the daemon's own paths and interfaces:

    /                        org.ofono.Manager: GetModems() -> a(oa{sv}); ModemAdded(o, a{sv}), ModemRemoved(o)
    /<modem>                 org.ofono.Modem: GetProperties, SetProperty(s, v); PropertyChanged(s, v)
                             org.ofono.VoiceCallManager: GetProperties, GetCalls, Dial, HangupAll,
                             SwapCalls, ReleaseAndAnswer, ReleaseAndSwap, HoldAndAnswer, Transfer,
                             SendTones (PrivateChat, CreateMultiparty, HangupMultiparty answer
                             org.ofono.Error.NotImplemented); CallAdded(o, a{sv}), CallRemoved(o)
    /<modem>/voicecallNN     org.ofono.VoiceCall: GetProperties, Answer, Hangup, Deflect(s);
                             PropertyChanged(s, v), DisconnectReason(s)

Call paths are numbered per modem from 01 and a freed number is reused at once (the lowest free
one), as oFono does: back-to-back calls are both /phonesim/voicecall01.
A call's properties are those oFono sends: State, LineIdentification, Name, Multiparty, RemoteHeld,
RemoteMultiparty, Emergency always; StartTime only once the call has been active; IncomingLine,
Information and Icon only when set (this mock never sets them, except IncomingLine from "calls").

Control methods, on org.freedesktop.DBus.Mock at /. Each puts its signals on the bus before it
replies, so once `gdbus call` returns they have been sent.

    AddModem(s name) -> o             New powered, online modem /<name> with VoiceCallManager; ModemAdded.
    RemoveModem(o modem)              ModemRemoved; its calls vanish with no CallRemoved (as oFono does
                                      when a modem goes away).
    Ring(o modem, s number) -> o      Incoming call: CallAdded(path, props) with State "incoming".
                                      number "" = not (yet) known, "withheld" = caller ID withheld.
    Wait(o modem, s number) -> o      Same, State "waiting" (a second incoming call).
    Dial(o modem, s number) -> o      Outgoing call as if dialled by some client: CallAdded, State "dialing".
    SetSerial(o modem, s serial)      The modem's Serial (its IMEI): PropertyChanged("Serial"), as oFono
                                      sends once a powered modem has read it (nothing when unchanged).
    SetNumber(o call, s number)       A late +CLIP: PropertyChanged("LineIdentification") (nothing when
                                      unchanged; also PropertyChanged("Emergency", true) for an
                                      emergency number, as oFono does).
    SetState(o call, s state)         PropertyChanged("State"); becoming "active" from incoming/dialing/
                                      alerting/waiting also sends PropertyChanged("StartTime"). Any
                                      string is accepted (unknown ones too, for robustness tests);
                                      "disconnected" ends the call as RemoteHangup(call, "") does.
                                      Nothing at all when the state is unchanged, like oFono.
    RemoteHangup(o call, s reason)    DisconnectReason(reason), PropertyChanged State "disconnected",
                                      CallRemoved, object gone, number free. reason "" sends no
                                      DisconnectReason (oFono's "unknown"); oFono itself only sends
                                      "local", "remote" and "network", any other string is passed on.
    EmitMalformedCallAdded(o modem) -> o
                                      Emits CallAdded with signature oa{ss} (not oa{sv}) from the real
                                      owner and the modem's path, for the next free call path (returned)
                                      carrying State "incoming"; no object is created.
    SetAccessDenied(b denied)         Switch the at_console refusal (see "access_denied") on or off.
    LoseSignals(b lose) -> u          A system asleep: while on, every change still happens but no signal
                                      reaches the bus (GetCalls shows the truth); off, signals flow
                                      again and the reply counts those dropped. A call hung up while on
                                      simply is not listed any more (oFono forgets ended calls).

Real methods that change calls (Answer, Hangup, Deflect, Dial, HangupAll, ...) check states at once
and fail as oFono does (org.ofono.Error.Failed, InvalidFormat, ...), but, as in oFono, the call
changes they cause reach the bus only after the method's reply (from an idle callback).

Template parameters (-p JSON, all optional):
    "modems": ["phonesim", ...] | N   modems present at start: a list of names, or a count N for
                                      /ril_0 ... /ril_N-1 (default ["phonesim"], i.e. /phonesim).
    "calls": [ {...}, ... ]           calls already live at start (no signals), for start-up sync
                                      tests. Keys: "modem" (index or name, default 0), "state"
                                      (default "active"), "number" (default ""), "name", "incoming_line",
                                      "multiparty" (bool), "remote_held" (bool).
    "access_denied": true             every org.ofono.* method (not the Mock ones) fails with
                                      org.freedesktop.DBus.Error.AccessDenied, as the bus refuses a
                                      non-root, non-at_console caller; signals still flow.
'''

import os
import re
import sys
import time

import dbus
from gi.repository import GLib

from dbusmock import MOCK_IFACE
from dbusmock.mockobject import objects

# dbusmock runs a template from its path, not as a package: the shared module is found beside it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import templatelib  # noqa: E402  pylint: disable=wrong-import-position

BUS_NAME = 'org.ofono'
MAIN_OBJ = '/'
MAIN_IFACE = 'org.ofono.Manager'
SYSTEM_BUS = True

MODEM_IFACE = 'org.ofono.Modem'
VCM_IFACE = 'org.ofono.VoiceCallManager'
CALL_IFACE = 'org.ofono.VoiceCall'

STATES = ('active', 'held', 'dialing', 'alerting', 'incoming', 'waiting', 'disconnected')
# oFono stamps StartTime when a call reaches "active" from one of these.
STARTS_CALL = ('incoming', 'dialing', 'alerting', 'waiting')
EMERGENCY_NUMBERS = ['08', '000', '110', '112', '118', '119', '911', '999']
MAX_CALL_ID = 99          # the path has room for two digits


def _ofono_error(kind, message):
    return dbus.exceptions.DBusException(message, name='org.ofono.Error.' + kind)


def _later(action):
    '''Run action after the current method has replied, as oFono's modem-driven changes come.'''
    def run():
        try:
            action()
        except Exception as e:  # pylint: disable=broad-except
            # An exception here would otherwise vanish inside GLib; make it visible in the log.
            print(f'telwatch ofono mock: deferred action failed: {e!r}', file=sys.stderr, flush=True)
        return False
    GLib.idle_add(run)


def _start_time(when=None):
    return time.strftime('%Y-%m-%dT%H:%M:%S%z', time.localtime(when))


class _Call:
    '''What oFono knows about one call; properties() is what it sends for it.'''

    def __init__(self, modem, cid, state, number, name='', incoming_line='', multiparty=False,
                 remote_held=False):
        self.modem = modem
        self.cid = cid
        self.path = f'{modem}/voicecall{cid:02d}'
        self.state = state
        self.number = number
        self.name = name
        self.incoming_line = incoming_line
        self.multiparty = multiparty
        self.remote_held = remote_held
        self.start_time = _start_time() if state in ('active', 'held') else None

    def properties(self):
        props = {'State': dbus.String(self.state),
                 'LineIdentification': dbus.String(self.number)}
        if self.incoming_line:
            props['IncomingLine'] = dbus.String(self.incoming_line)
        props['Name'] = dbus.String(self.name)
        if self.start_time is not None:
            props['StartTime'] = dbus.String(self.start_time)
        props['Multiparty'] = dbus.Boolean(self.multiparty)
        props['RemoteHeld'] = dbus.Boolean(self.remote_held)
        props['RemoteMultiparty'] = dbus.Boolean(False)
        props['Emergency'] = dbus.Boolean(self.number in EMERGENCY_NUMBERS)
        return dbus.Dictionary(props, signature='sv')


class _Ofono:
    '''All the state of one mock instance; dbusmock's Reset() builds a fresh one.'''

    def __init__(self, mock, access_denied):
        self.mock = mock
        self.access_denied = access_denied
        self.modems = []        # modem paths, in creation order (GetModems order)
        self.voice = {}         # modem path -> {call id: _Call}, or None while powered off
        self.calls = {}         # call path -> _Call

    # ---- lookups ---------------------------------------------------------------------------

    def modem(self, path):
        if path not in self.voice:
            raise templatelib.mock_error(f'no such modem: {path}')
        return objects[path]

    def voice_of(self, modem_path):
        self.modem(modem_path)
        if self.voice[modem_path] is None:
            raise templatelib.mock_error(f'{modem_path} is powered off: it has no VoiceCallManager')
        return self.voice[modem_path]

    def call(self, path):
        if path not in self.calls:
            raise templatelib.mock_error(f'no such call: {path}')
        return self.calls[path]

    def calls_in(self, modem_path, *states):
        '''Calls of a modem in id order (GetCalls order), optionally only those in some states.'''
        calls = [c for _, c in sorted(self.voice_of(modem_path).items())]
        return [c for c in calls if not states or c.state in states]

    def free_id(self, modem_path):
        '''oFono hands out the lowest call id not in use, so paths come back after a hang-up.'''
        used = self.voice_of(modem_path)
        for cid in range(1, MAX_CALL_ID + 1):
            if cid not in used:
                return cid
        raise _ofono_error('Failed', 'too many calls')

    # ---- signals ---------------------------------------------------------------------------

    @staticmethod
    def emit_modem_changed(path, name, value):
        objects[path].EmitSignal(MODEM_IFACE, 'PropertyChanged', 'sv', [name, value])

    def emit_call_changed(self, call, name):
        props = call.properties()
        objects[call.path].props[CALL_IFACE] = props   # keep dbusmock's Properties.Get in step
        objects[call.path].EmitSignal(CALL_IFACE, 'PropertyChanged', 'sv', [name, props[name]])

    # ---- modems ----------------------------------------------------------------------------

    def modem_properties(self, path):
        return objects[path].props[MODEM_IFACE]

    def add_modem(self, name, announce):
        if not re.fullmatch(r'[A-Za-z0-9_]+', name):
            raise dbus.exceptions.DBusException(f'invalid modem name {name!r}',
                                                name='org.freedesktop.DBus.Error.InvalidArgs')
        path = '/' + name
        if path in self.voice:
            raise templatelib.mock_error(f'modem {path} already exists')
        self.mock.AddObject(path, MODEM_IFACE, {
            'Online': dbus.Boolean(True),
            'Powered': dbus.Boolean(True),
            'Lockdown': dbus.Boolean(False),
            'Emergency': dbus.Boolean(False),
            'Name': dbus.String(name),
            'Manufacturer': dbus.String('telwatch'),
            'Model': dbus.String('Mock Modem'),
            'Revision': dbus.String('mock-1'),
            'Serial': dbus.String(f'35693800{len(self.modems):07d}'),
            'Type': dbus.String('hardware'),
            'Features': dbus.Array([], signature='s'),
            'Interfaces': dbus.Array([VCM_IFACE], signature='s'),
        }, [])
        obj = objects[path]
        obj.props[VCM_IFACE] = {'EmergencyNumbers': dbus.Array(EMERGENCY_NUMBERS, signature='s')}
        self.modems.append(path)
        self.voice[path] = {}
        self.add_modem_methods(obj, path)
        self.add_voice_methods(obj, path)
        if announce:
            self.mock.EmitSignal(MAIN_IFACE, 'ModemAdded', 'oa{sv}',
                                 [dbus.ObjectPath(path), self.modem_properties(path)])
        return path

    def drop_calls(self, modem_path):
        '''The voice atom going away (modem removed or powered off) unregisters its calls
        without CallRemoved.'''
        for call in list(self.calls_in(modem_path)):
            del self.calls[call.path]
            self.mock.RemoveObject(call.path)

    def remove_modem(self, path):
        self.modem(path)
        if self.voice[path] is not None:
            self.drop_calls(path)
        del self.voice[path]
        self.modems.remove(path)
        self.mock.RemoveObject(path)
        self.mock.EmitSignal(MAIN_IFACE, 'ModemRemoved', 'o', [dbus.ObjectPath(path)])

    def set_modem_property(self, path, name, value):
        props = self.modem_properties(path)
        if name not in ('Powered', 'Online', 'Lockdown'):
            raise _ofono_error('InvalidArguments', 'Invalid arguments in method call')
        if not isinstance(value, dbus.Boolean):
            raise _ofono_error('InvalidArguments', 'Invalid arguments in method call')
        value = dbus.Boolean(value)
        if props[name] == value:
            return
        if name == 'Online' and value and not props['Powered']:
            raise _ofono_error('NotAvailable', 'Operation currently not available')
        if name == 'Powered' and not value:
            # Powering down flushes the voice atom: calls vanish, the interface goes away.
            if props['Online']:
                props['Online'] = dbus.Boolean(False)
                self.emit_modem_changed(path, 'Online', props['Online'])
            self.drop_calls(path)
            self.voice[path] = None
            props['Interfaces'] = dbus.Array([], signature='s')
            self.emit_modem_changed(path, 'Interfaces', props['Interfaces'])
        elif name == 'Powered' and value:
            self.voice[path] = {}
            props['Interfaces'] = dbus.Array([VCM_IFACE], signature='s')
            self.emit_modem_changed(path, 'Interfaces', props['Interfaces'])
        props[name] = value
        self.emit_modem_changed(path, name, value)

    def ctl_set_serial(self, path, serial):
        self.modem(path)
        props = self.modem_properties(path)
        if props.get('Serial') == serial:
            return
        props['Serial'] = dbus.String(serial)
        self.emit_modem_changed(path, 'Serial', props['Serial'])

    def get_modems(self):
        return dbus.Array([dbus.Struct((dbus.ObjectPath(p), self.modem_properties(p)), signature='oa{sv}')
                           for p in self.modems], signature='(oa{sv})')

    # ---- calls -----------------------------------------------------------------------------

    def new_call(self, modem_path, state, number, **extra):
        '''Register a call object; the caller announces it (or not) with announce().'''
        calls = self.voice_of(modem_path)
        call = _Call(modem_path, self.free_id(modem_path), state, number, **extra)
        self.mock.AddObject(call.path, CALL_IFACE, call.properties(), [])
        self.add_call_methods(objects[call.path], call.path)
        calls[call.cid] = call
        self.calls[call.path] = call
        return call

    @staticmethod
    def announce(call):
        objects[call.modem].EmitSignal(VCM_IFACE, 'CallAdded', 'oa{sv}',
                                       [dbus.ObjectPath(call.path), call.properties()])

    def set_state(self, call, state):
        '''oFono's voicecall_set_call_status: State, then StartTime when the call connects.'''
        if state == call.state:
            return
        old = call.state
        call.state = state
        self.emit_call_changed(call, 'State')
        if state == 'active' and old in STARTS_CALL:
            call.start_time = _start_time()
            self.emit_call_changed(call, 'StartTime')

    def set_number(self, call, number):
        if number == call.number:
            return
        call.number = number
        self.emit_call_changed(call, 'LineIdentification')
        if number in EMERGENCY_NUMBERS:
            self.emit_call_changed(call, 'Emergency')

    def disconnect(self, call, reason):
        '''oFono's ofono_voicecall_disconnected: the multiparty shrinks, DisconnectReason (unless
        unknown), State "disconnected", CallRemoved, then the object and its number are freed.'''
        if call.multiparty:
            call.multiparty = False
            partners = [c for c in self.calls_in(call.modem) if c.multiparty]
            if len(partners) == 1:
                partners[0].multiparty = False
                self.emit_call_changed(partners[0], 'Multiparty')
        if reason:
            objects[call.path].EmitSignal(CALL_IFACE, 'DisconnectReason', 's', [reason])
        self.set_state(call, 'disconnected')
        objects[call.modem].EmitSignal(VCM_IFACE, 'CallRemoved', 'o', [dbus.ObjectPath(call.path)])
        del self.voice[call.modem][call.cid]
        del self.calls[call.path]
        self.mock.RemoveObject(call.path)

    # ---- real methods ----------------------------------------------------------------------

    def add_real_method(self, obj, iface, name, in_sig, out_sig, impl):
        def guarded(*args):
            # The bus, not oFono, refuses callers outside root/at_console; model its answer.
            if self.access_denied:
                raise dbus.exceptions.DBusException(
                    f'Rejected send message, 2 matched rules; type="method_call", interface="{iface}" '
                    f'member="{name}" destination="org.ofono" (telwatch mock: at_console policy)',
                    name='org.freedesktop.DBus.Error.AccessDenied')
            return impl(*args)
        templatelib.add_method(obj, iface, name, in_sig, out_sig, guarded)

    def add_modem_methods(self, obj, path):
        self.add_real_method(obj, MODEM_IFACE, 'GetProperties', '', 'a{sv}',
                             lambda: self.modem_properties(path))
        self.add_real_method(obj, MODEM_IFACE, 'SetProperty', 'sv', '',
                             lambda name, value: self.set_modem_property(path, str(name), value))

    def add_voice_methods(self, obj, modem_path):
        def voice():
            # While powered off the interface is not registered at all.
            if self.voice[modem_path] is None:
                raise dbus.exceptions.DBusException(f'{VCM_IFACE} is not available on {modem_path}',
                                                    name='org.freedesktop.DBus.Error.UnknownMethod')
            return self.voice[modem_path]

        def have(*states):
            return any(c.state in states for c in voice().values())

        def get_properties():
            voice()
            return objects[modem_path].props[VCM_IFACE]

        def get_calls():
            voice()
            return dbus.Array([dbus.Struct((dbus.ObjectPath(c.path), c.properties()), signature='oa{sv}')
                               for c in self.calls_in(modem_path)], signature='(oa{sv})')

        def dial(number, hide_callerid):
            voice()
            if hide_callerid not in ('', 'default', 'enabled', 'disabled'):
                raise _ofono_error('InvalidFormat', 'Invalid format')
            if not re.fullmatch(r'\+?[0-9*#]{1,80}', number):
                raise _ofono_error('InvalidFormat', 'Invalid format')
            if not self.modem_properties(modem_path)['Online']:
                raise _ofono_error('NotAvailable', 'Operation currently not available')
            if have('incoming') or have('dialing', 'alerting') or (have('active') and have('held')):
                raise _ofono_error('Failed', 'Operation failed')
            held_now = self.calls_in(modem_path, 'active')
            call = self.new_call(modem_path, 'dialing', str(number))

            def after_reply():
                # oFono replies with the path first, then announces the call; the network
                # holds the previously active call.
                self.announce(call)
                for c in held_now:
                    self.set_state(c, 'held')
            _later(after_reply)
            return dbus.ObjectPath(call.path)

        def hangup_all():
            calls = self.calls_in(modem_path)
            _later(lambda: [self.disconnect(c, 'local') for c in calls if c.path in self.calls])

        def swap_calls():
            if have('waiting'):
                raise _ofono_error('Failed', 'Operation failed')
            active, held = self.calls_in(modem_path, 'active'), self.calls_in(modem_path, 'held')

            def swap():
                for c in active:
                    self.set_state(c, 'held')
                for c in held:
                    self.set_state(c, 'active')
            _later(swap)

        def release_and_answer():
            if not have('waiting'):
                raise _ofono_error('Failed', 'Operation failed')
            active, waiting = self.calls_in(modem_path, 'active'), self.calls_in(modem_path, 'waiting')[0]

            def release():
                for c in active:
                    self.disconnect(c, 'local')
                self.set_state(waiting, 'active')
            _later(release)

        def release_and_swap():
            active, held = self.calls_in(modem_path, 'active'), self.calls_in(modem_path, 'held')

            def release():
                for c in active:
                    self.disconnect(c, 'local')
                for c in held:
                    self.set_state(c, 'active')
            _later(release)

        def hold_and_answer():
            if not have('waiting') or (have('active', 'dialing', 'alerting') and have('held')):
                raise _ofono_error('Failed', 'Operation failed')
            active, waiting = self.calls_in(modem_path, 'active'), self.calls_in(modem_path, 'waiting')[0]

            def hold():
                for c in active:
                    self.set_state(c, 'held')
                self.set_state(waiting, 'active')
            _later(hold)

        def transfer():
            connected = self.calls_in(modem_path, 'active', 'dialing', 'alerting')
            held = self.calls_in(modem_path, 'held')
            if len(connected) != 1 or len(held) != 1:
                raise _ofono_error('Failed', 'Operation failed')
            _later(lambda: [self.disconnect(c, 'local') for c in connected + held])

        def send_tones(tones):
            if not have('active', 'alerting'):
                raise _ofono_error('Failed', 'Operation failed')
            if not re.fullmatch(r'[0-9*#A-Da-dpP]+', tones):
                raise _ofono_error('InvalidFormat', 'Invalid format')

        def not_implemented(*_args):
            voice()
            raise _ofono_error('NotImplemented', 'Implementation not provided')

        for name, in_sig, out_sig, impl in [
                ('GetProperties', '', 'a{sv}', get_properties),
                ('GetCalls', '', 'a(oa{sv})', get_calls),
                ('Dial', 'ss', 'o', dial),
                ('HangupAll', '', '', hangup_all),
                ('SwapCalls', '', '', swap_calls),
                ('ReleaseAndAnswer', '', '', release_and_answer),
                ('ReleaseAndSwap', '', '', release_and_swap),
                ('HoldAndAnswer', '', '', hold_and_answer),
                ('Transfer', '', '', transfer),
                ('SendTones', 's', '', send_tones),
                ('PrivateChat', 'o', 'ao', not_implemented),
                ('CreateMultiparty', '', 'ao', not_implemented),
                ('HangupMultiparty', '', '', not_implemented),
        ]:
            self.add_real_method(obj, VCM_IFACE, name, in_sig, out_sig, impl)

    def add_call_methods(self, obj, path):
        def this():
            if path not in self.calls:
                raise dbus.exceptions.DBusException(f'{path} is gone',
                                                    name='org.freedesktop.DBus.Error.UnknownObject')
            return self.calls[path]

        def answer():
            call = this()
            if call.state != 'incoming':
                raise _ofono_error('Failed', 'Operation failed')
            _later(lambda: self.set_state(call, 'active') if path in self.calls else None)

        def hangup():
            call = this()
            if call.state == 'disconnected':
                raise _ofono_error('Failed', 'Operation failed')
            _later(lambda: self.disconnect(call, 'local') if path in self.calls else None)

        def deflect(number):
            call = this()
            if call.state not in ('incoming', 'waiting'):
                raise _ofono_error('Failed', 'Operation failed')
            if not re.fullmatch(r'\+?[0-9*#]{1,20}', number):
                raise _ofono_error('InvalidFormat', 'Invalid format')
            _later(lambda: self.disconnect(call, 'local') if path in self.calls else None)

        for name, in_sig, out_sig, impl in [
                ('GetProperties', '', 'a{sv}', lambda: this().properties()),
                ('Answer', '', '', answer),
                ('Hangup', '', '', hangup),
                ('Deflect', 's', '', deflect),
        ]:
            self.add_real_method(obj, CALL_IFACE, name, in_sig, out_sig, impl)

    # ---- control methods (org.freedesktop.DBus.Mock) ---------------------------------------

    def ctl_add_call(self, modem, number, state):
        call = self.new_call(modem, state, str(number))
        self.announce(call)
        return dbus.ObjectPath(call.path)

    def ctl_set_number(self, call, number):
        self.set_number(self.call(call), str(number))

    def ctl_set_state(self, call, state):
        call = self.call(call)
        if state == 'disconnected':
            self.disconnect(call, '')
        else:
            self.set_state(call, str(state))

    def ctl_remote_hangup(self, call, reason):
        self.disconnect(self.call(call), str(reason))

    def ctl_emit_malformed_call_added(self, modem):
        path = f'{modem}/voicecall{self.free_id(modem):02d}'
        objects[modem].EmitSignal(VCM_IFACE, 'CallAdded', 'oa{ss}', [
            dbus.ObjectPath(path),
            dbus.Dictionary({'State': 'incoming', 'LineIdentification': '+15550000'}, signature='ss')])
        return dbus.ObjectPath(path)

    def ctl_set_access_denied(self, denied):
        self.access_denied = bool(denied)


def load(mock, parameters):
    templatelib.install_signal_loss()
    ofono = _Ofono(mock, bool(parameters.get('access_denied', False)))
    mock.telwatch_ofono = ofono   # reachable from a debugger or an AddMethod code string

    ofono.add_real_method(mock, MAIN_IFACE, 'GetModems', '', 'a(oa{sv})', ofono.get_modems)

    for name, in_sig, out_sig, impl in [
            ('AddModem', 's', 'o', lambda name: ofono.add_modem(str(name), announce=True)),
            ('RemoveModem', 'o', '', ofono.remove_modem),
            ('Ring', 'os', 'o', lambda modem, number: ofono.ctl_add_call(modem, number, 'incoming')),
            ('Wait', 'os', 'o', lambda modem, number: ofono.ctl_add_call(modem, number, 'waiting')),
            ('Dial', 'os', 'o', lambda modem, number: ofono.ctl_add_call(modem, number, 'dialing')),
            ('SetSerial', 'os', '', ofono.ctl_set_serial),
            ('SetNumber', 'os', '', ofono.ctl_set_number),
            ('SetState', 'os', '', ofono.ctl_set_state),
            ('RemoteHangup', 'os', '', ofono.ctl_remote_hangup),
            ('EmitMalformedCallAdded', 'o', 'o', ofono.ctl_emit_malformed_call_added),
            ('SetAccessDenied', 'b', '', ofono.ctl_set_access_denied),
            ('LoseSignals', 'b', 'u', templatelib.lose_signals),
    ]:
        templatelib.add_method(mock, MOCK_IFACE, name, in_sig, out_sig, impl)

    # Start-up state is created silently: it was there before any test client connected.
    modems = parameters.get('modems', ['phonesim'])
    if isinstance(modems, int):
        modems = [f'ril_{i}' for i in range(modems)]
    for name in modems:
        ofono.add_modem(str(name), announce=False)
    for spec in parameters.get('calls', []):
        modem = spec.get('modem', 0)
        modem_path = ofono.modems[modem] if isinstance(modem, int) else '/' + str(modem).lstrip('/')
        ofono.new_call(modem_path, str(spec.get('state', 'active')), str(spec.get('number', '')),
                       name=str(spec.get('name', '')), incoming_line=str(spec.get('incoming_line', '')),
                       multiparty=bool(spec.get('multiparty', False)),
                       remote_held=bool(spec.get('remote_held', False)))
