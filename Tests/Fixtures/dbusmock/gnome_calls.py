'''GNOME Calls' session API, for telwatch's tests beside a dialer (python3-dbusmock template).

Start it on a PRIVATE bus only (see README.md beside this file). It owns org.gnome.Calls with an
object manager at /org/gnome/Calls, as `gnome-calls --daemon` does (docs/phones.md); the real
GNOME Calls runs in bench/dialer-bench. Its calls are objects /org/gnome/Calls/Call/N with the
interface org.gnome.Calls.Call: properties Id (s), Inbound (b), Silenced (b, this mock's own),
and the method Silence, which sets Silenced.

The test adds a call with the mock method AddIncomingCall(s id) -> o, which announces it with
InterfacesAdded, as GNOME Calls does when it sees a new call.
'''

import dbus
from dbusmock.mockobject import OBJECT_MANAGER_IFACE, objects

BUS_NAME = 'org.gnome.Calls'
MAIN_OBJ = '/org/gnome/Calls'
MAIN_IFACE = OBJECT_MANAGER_IFACE
SYSTEM_BUS = False
CALL_IFACE = 'org.gnome.Calls.Call'


def load(mock, parameters):
    mock.calls = 0
    mock.AddMethod(MAIN_IFACE, 'GetManagedObjects', '', 'a{oa{sa{sv}}}',
                   'ret = {p: {"' + CALL_IFACE + '": objects[p].GetAll("' + CALL_IFACE + '")} '
                   'for p in objects if p.startswith("/org/gnome/Calls/Call/")}')


@dbus.service.method('org.freedesktop.DBus.Mock', in_signature='s', out_signature='o')
def AddIncomingCall(self, identifier):
    self.calls += 1
    path = f'/org/gnome/Calls/Call/{self.calls}'
    properties = {'Id': dbus.String(identifier), 'Inbound': dbus.Boolean(True), 'Silenced': dbus.Boolean(False)}
    self.AddObject(path, CALL_IFACE, properties, [
        ('Silence', '', '', f'self.Set("{CALL_IFACE}", "Silenced", True)'),
    ])
    self.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {CALL_IFACE: properties}])
    return path
