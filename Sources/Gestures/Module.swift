// The Gestures module. Its types arrive with the module's issue; Sources/Gestures/Gestures.docc describes its scope.
