// The Catalog module. Its types arrive with the module's issue; Sources/Catalog/Catalog.docc describes its scope.
