/* count.c: the length of a string. */
#include "count.h"
int count(const char *text) {
  int n = 0;
  while (text[n]) n++;
  return n;
}
