module github.com/gdaki/gpunetio

go 1.22

require (
	github.com/NVIDIA/go-nvml v0.13.0-1
	github.com/stretchr/testify v1.10.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
