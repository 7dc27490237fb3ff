module github.com/gdaki/gpunetio

go 1.22

require github.com/stretchr/testify v1.10.0 // indirect
