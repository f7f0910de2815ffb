// SliderFlow's tests arrive with the module's issue; the target exists so the package layout is complete.
