/* count.h: counting letters. */
int count(const char *text);
