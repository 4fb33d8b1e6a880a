-- -v streams command output line by line, prefixed with the operation's name.
-- args: -v @
-- exit: 0
-- stdout: [greet] hello
-- stdout: [greet] world
echo = operation { name = "greet", sh = "printf 'hello\\nworld\\n'" }
