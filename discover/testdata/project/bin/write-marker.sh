#!/bin/sh
# A stdio "server" that proves it ran: discovery must never run it.
echo ran > "$(dirname "$0")/../MARKER"
