// The Player module. Its types arrive with the module's issue; Sources/Player/Player.docc describes its scope.
