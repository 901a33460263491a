'''callaudiod mock for telwatch's phone-action tests (python3-dbusmock template).

Start it on a PRIVATE bus only (see README.md beside this file). It owns
org.mobian_project.CallAudio at /org/mobian_project/CallAudio with callaudiod's interface
(docs/phone-actions.md):

    SelectMode(u mode) -> b     0 default, 1 call: sets AudioMode and answers true, as callaudiod
                                does when its sound server switched (the real daemon, run with no
                                sound server in the tests, is the failure path)
    EnableSpeaker(b) -> b       sets SpeakerState (0 off, 1 on)
    MuteMic(b) -> b             sets MicState (0 off, 1 on)
    properties AudioMode, SpeakerState, MicState (u)

Parameters (-p JSON): "refuse": true makes every switch answer false and change nothing.
'''

import dbus

BUS_NAME = 'org.mobian_project.CallAudio'
MAIN_OBJ = '/org/mobian_project/CallAudio'
MAIN_IFACE = 'org.mobian_project.CallAudio'
SYSTEM_BUS = False


def load(mock, parameters):
    refuse = bool(parameters.get('refuse', False))
    mock.AddProperties(MAIN_IFACE, {
        'AudioMode': dbus.UInt32(0),
        'SpeakerState': dbus.UInt32(0),
        'MicState': dbus.UInt32(0),
    })

    def switch(prop, value):
        if refuse:
            return 'ret = False'
        return (f'self.Set("{MAIN_IFACE}", "{prop}", dbus.UInt32({value}))\n'
                'ret = True')

    mock.AddMethods(MAIN_IFACE, [
        ('SelectMode', 'u', 'b', switch('AudioMode', 'args[0]')),
        ('EnableSpeaker', 'b', 'b', switch('SpeakerState', '1 if args[0] else 0')),
        ('MuteMic', 'b', 'b', switch('MicState', '1 if args[0] else 0')),
    ])
