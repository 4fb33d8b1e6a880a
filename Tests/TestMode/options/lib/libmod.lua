return "from lib"
