// The SliderFlow module. Its types arrive with the module's issue; Sources/SliderFlow/SliderFlow.docc describes its scope.
