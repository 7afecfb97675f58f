/*
 * doorbell_intruder NAME... — plays another local user against a job's shm doorbells (abstract
 * AF_UNIX datagram sockets, "@name" as /proc/net/unix shows them): for about two seconds it sends
 * each one wake-up bytes, requests for the shared segment, a descriptor of its own dressed as the
 * segment, and garbage. It prints how many datagrams it sent and whether any answer came back
 * (there must be none: exit 1 if one did).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabric/shm/shm.h"

static socklen_t addr_of(struct sockaddr_un *sa, const char *name)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    size_t n = strlen(name + 1); /* skip the '@' */
    if (n > sizeof sa->sun_path - 1)
        n = sizeof sa->sun_path - 1;
    memcpy(sa->sun_path + 1, name + 1, n);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int main(int argc, char **argv)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un me = {.sun_family = AF_UNIX};
    /* Autobound, so that an answer could reach us. */
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(sa_family_t)) != 0) {
        perror("doorbell_intruder: socket");
        return 2;
    }
    long sent = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 1; i < argc; i++) {
            struct sockaddr_un sa;
            socklen_t len = addr_of(&sa, argv[i]);
            const struct sockaddr *to = (const struct sockaddr *)&sa;
            sent += sendto(fd, "\1", 1, MSG_DONTWAIT, to, len) == 1;
            sent += sendto(fd, "MFSHMREQ", 8, MSG_DONTWAIT, to, len) == 8;
            sent += mf_shm_doorbell_give(fd, to, len, fd) == 0; /* posing as local rank 0 */
            sent += sendto(fd, "garbage!garbage!", 16, MSG_DONTWAIT, to, len) == 16;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    char reply[64];
    ssize_t got = recv(fd, reply, sizeof reply, MSG_DONTWAIT);
    printf("doorbell_intruder: sent %ld datagrams to %d doorbells; %s\n", sent, argc - 1,
           got >= 0 ? "GOT AN ANSWER" : "no answer");
    return got >= 0 ? 1 : 0;
}
