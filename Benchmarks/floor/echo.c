/* The D-Bus floor of `make bench` (Benchmarks/bench.py): the least a service over libdbus can do.
 * It connects to the session bus, owns the name given as its argument (DO_NOT_QUEUE), and answers
 * org.freedesktop.DBus.Properties.Get(org.mpris.MediaPlayer2.Player, PlaybackStatus) on
 * /org/mpris/MediaPlayer2 with a string it keeps in memory, and Get(org.mpris.MediaPlayer2.TrackList,
 * Tracks) with TRACKS object paths named as tonearmd names its track ids, made once at start.
 * libdbus answers Peer.Ping itself. Nothing else: its start-up time and round trips are what
 * tonearmd's are compared with.
 *
 *   cc -O2 -o echo echo.c $(pkg-config --cflags --libs dbus-1)
 *   DBUS_SESSION_BUS_ADDRESS=... ./echo io.github.tonearm.BenchEcho [TRACKS]
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *playback_status = "Playing";
static char **tracks;
static int track_count;

static DBusHandlerResult on_message(DBusConnection *connection, DBusMessage *message, void *data) {
    (void)data;
    if (!dbus_message_is_method_call(message, DBUS_INTERFACE_PROPERTIES, "Get"))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    const char *interface = NULL, *property = NULL;
    DBusMessage *reply;
    if (!dbus_message_get_args(message, NULL, DBUS_TYPE_STRING, &interface, DBUS_TYPE_STRING, &property,
                               DBUS_TYPE_INVALID)) {
        reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Get takes (ss)");
    } else if (strcmp(interface, "org.mpris.MediaPlayer2.Player") == 0 && strcmp(property, "PlaybackStatus") == 0) {
        reply = dbus_message_new_method_return(message);
        DBusMessageIter iter, variant;
        dbus_message_iter_init_append(reply, &iter);
        dbus_message_iter_open_container(&iter, DBUS_TYPE_VARIANT, "s", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_STRING, &playback_status);
        dbus_message_iter_close_container(&iter, &variant);
    } else if (strcmp(interface, "org.mpris.MediaPlayer2.TrackList") == 0 && strcmp(property, "Tracks") == 0) {
        reply = dbus_message_new_method_return(message);
        DBusMessageIter iter, variant, array;
        dbus_message_iter_init_append(reply, &iter);
        dbus_message_iter_open_container(&iter, DBUS_TYPE_VARIANT, "ao", &variant);
        dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "o", &array);
        for (int i = 0; i < track_count; i++)
            dbus_message_iter_append_basic(&array, DBUS_TYPE_OBJECT_PATH, &tracks[i]);
        dbus_message_iter_close_container(&variant, &array);
        dbus_message_iter_close_container(&iter, &variant);
    } else {
        reply = dbus_message_new_error(message, DBUS_ERROR_UNKNOWN_PROPERTY, property);
    }
    dbus_connection_send(connection, reply, NULL);
    dbus_message_unref(reply);
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: echo BUS-NAME [TRACKS]\n");
        return 2;
    }
    track_count = argc > 2 ? atoi(argv[2]) : 0;
    tracks = calloc(track_count ? track_count : 1, sizeof *tracks);
    for (int i = 0; i < track_count; i++) {
        tracks[i] = malloc(48);
        snprintf(tracks[i], 48, "/io/github/tonearm/Track/%d", i + 1);
    }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!connection) {
        fprintf(stderr, "echo: %s\n", error.message);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(connection, TRUE);
    static const DBusObjectPathVTable vtable = {.message_function = on_message};
    dbus_connection_register_object_path(connection, "/org/mpris/MediaPlayer2", &vtable, NULL);
    int owned = dbus_bus_request_name(connection, argv[1], DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "echo: cannot own %s: %s\n", argv[1], dbus_error_is_set(&error) ? error.message : "taken");
        return 1;
    }
    while (dbus_connection_read_write_dispatch(connection, -1)) {}
    return 0;
}
