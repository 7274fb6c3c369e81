"""System D-Bus probe: connect, authenticate, Hello, ListNames (jeepney, no busctl output parsing)."""

from __future__ import annotations

from jeepney import DBusAddress, new_method_call  # type: ignore[import-untyped]
from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

TIMEOUT_S = 2.0
BUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")


def bus_names() -> list[str]:
    """Hello (done by open_dbus_connection), then ListNames on the system bus; the well-known names."""
    with open_dbus_connection(bus="SYSTEM", auth_timeout=TIMEOUT_S) as connection:
        reply = connection.send_and_get_reply(new_method_call(BUS, "ListNames"), timeout=TIMEOUT_S)
    return sorted(name for name in reply.body[0] if not name.startswith(":"))
