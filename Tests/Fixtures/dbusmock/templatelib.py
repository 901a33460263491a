'''What the ModemManager and oFono templates beside this file share (it is no template itself).

dbusmock runs a template from its path without putting the template's folder on sys.path, so a
template imports this module after adding its own folder:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import templatelib
'''

import dbus

from dbusmock import mockobject


def mock_error(message):
    # dbusmock's own name for "no such object" (InvalidArgs would make gdbus blame the signature).
    return dbus.exceptions.DBusException(message, name='org.freedesktop.DBus.Mock.NameError')


def add_method(obj, iface, name, in_sig, out_sig, impl):
    '''Register impl as a D-Bus method of obj.

    dbusmock only runs a "code" argument that is a plain function (types.FunctionType, so not a
    bound method) and passes it the receiving object first; the lambda adapts both.
    '''
    obj.AddMethod(iface, name, in_sig, out_sig, lambda _receiver, *args: impl(*args))


# ---- LoseSignals: a system asleep ------------------------------------------------------------
#
# A suspended host runs no process at all, daemons and bus included; what goes missing are the
# modem's events that nobody turned into signals (URCs lost while the port slept, a call list the
# daemon only re-reads after the resume). A telwatch stopped with SIGSTOP would get every queued
# signal on SIGCONT: that tests signal delivery, not what telwatch must do after a resume, which is
# to read the state back. So while "asleep" a mock changes its state as usual but drops every
# signal it would emit: only its methods (listing, GetAll/GetProperties) tell what happened.
# The switch lives on dbusmock's class so that a Reset (which loads the template again) keeps one.

def install_signal_loss():
    cls = mockobject.DBusMockObject
    if getattr(cls, '_telwatch_lossy', False):
        return
    original = cls._emit_signal

    def emit_unless_lost(self, interface, name, signature, sigargs, details):
        if cls._telwatch_losing:
            cls._telwatch_lost += 1
            self.log(f'lost {interface}.{name} (LoseSignals)')
            return
        original(self, interface, name, signature, sigargs, details)

    cls._emit_signal = emit_unless_lost
    cls._telwatch_lossy = True
    cls._telwatch_losing = False
    cls._telwatch_lost = 0


def lose_signals(lose):
    '''LoseSignals(b lose) -> u: on, every signal is dropped from now on; off, they flow again and
    the reply is how many were dropped while it was on.'''
    cls = mockobject.DBusMockObject
    dropped = cls._telwatch_lost
    cls._telwatch_losing = bool(lose)
    cls._telwatch_lost = 0
    return dbus.UInt32(0 if lose else dropped)
