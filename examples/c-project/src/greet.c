/* greet.c: prints the greeting with the name's length. */
#include <stdio.h>
#include "greet.h"
#include "count.h"
void greet(const char *who) { printf("hello, %s (%d)\n", who, count(who)); }
