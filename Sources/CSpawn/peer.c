/* peer.c: the user id of the process at the other end of a Unix socket (the control socket's check). */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <sys/socket.h>

long cs_peer_uid(int fd) {
  struct ucred peer;
  socklen_t size = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) return -1;
  return (long)peer.uid;
}
