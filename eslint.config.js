import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders are floors, bottom first: each imports only from the floors below it (and its own). */
const FLOORS = [['shared', 'schemas'], ['topics'], ['events'], ['processors'], ['connectors'], ['api'], ['stack']];

/** kafkajs is called only in `topics/`; tests and benches may import anything. */
const kafkajsOutsideTopics = { name: 'kafkajs', message: 'kafkajs is used only under topics/: import what topics/index.ts exports.' };

function floorRules(floor, index) {
  const above = FLOORS.slice(index + 1).flat();
  const patterns = above.length === 0 ? [] : [{ regex: `^(\\.\\./)+(${above.join('|')})/`, message: `${floor.join('/')}/ sits below ${above.join(', ')}: an import may not run back up the floors.` }];
  return {
    files: floor.map((folder) => `${folder}/**/*.ts`),
    rules: {
      'no-restricted-imports': ['error', { paths: floor.includes('topics') ? [] : [kafkajsOutsideTopics], patterns }],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.stack/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...FLOORS.map(floorRules),
  { files: ['*.js', 'widget/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
